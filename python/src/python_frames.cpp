// The interpreter's frames for memory history (torch's stacks="python" and "all").
//
// Note [Python frames in memory history]
// The allocator asks for the frames of each recorded allocation and free on the thread that
// makes it, outside its locks. When that thread holds the GIL (every call from Python code does:
// cudakit's bound functions, and torch's operators under cudakit's allocator), the frames are
// read straight from the interpreter's frame objects, innermost first: each is the function's
// name, its file and the line being run, the three fields torch's snapshots give a Python frame.
// No Python code runs and nothing is imported, so a capture inside an allocation cannot re-enter
// the allocator. A thread without the GIL (a C++ thread, or a call that released it) gets no
// Python frames: taking the GIL there could deadlock against a thread that holds it while it
// waits for the allocator.

#include <Python.h>
#include <frameobject.h>

#include <string>

#include "common.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::python {
namespace {

std::string utf8(PyObject* text) {
  if (text == nullptr || !PyUnicode_Check(text)) return {};
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  if (data == nullptr) {
    PyErr_Clear();
    return {};
  }
  return std::string(data, static_cast<std::size_t>(size));
}

// A code object's attribute without running Python code: co_name and co_filename are plain
// members of the code object.
std::string code_attribute(PyCodeObject* code, const char* name) {
  PyObject* value = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), name);
  if (value == nullptr) {
    PyErr_Clear();
    return {};
  }
  std::string out = utf8(value);
  Py_DECREF(value);
  return out;
}

// Whether this thread may read the interpreter's frames: it has a thread state and holds the GIL,
// and the interpreter is neither absent nor shutting down. PyGILState_Check alone answers 1 on
// any thread once sub-interpreters have turned its check off, hence the thread state as well.
bool may_read_frames() {
#if PY_VERSION_HEX >= 0x030D0000
  if (!Py_IsInitialized() || Py_IsFinalizing() || PyThreadState_GetUnchecked() == nullptr) return false;
#else
  if (!Py_IsInitialized() || _Py_IsFinalizing() || _PyThreadState_UncheckedGet() == nullptr) return false;
#endif
  return PyGILState_Check() != 0;
}

}  // namespace

StackFrames python_frames() {
  StackFrames frames;
  if (!may_read_frames()) return frames;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    StackFrame f;
    f.name = code_attribute(code, "co_name");
    f.filename = code_attribute(code, "co_filename");
    f.line = PyFrame_GetLineNumber(frame);
    Py_DECREF(code);
    frames.push_back(std::move(f));
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  return frames;
}

std::function<StackFrames()> history_frames(std::string_view stacks) {
  if (stacks == "python") return [] { return python_frames(); };
  if (stacks == "all") {
    // The C++ frames up to the interpreter's, then the Python frames that called them.
    return [] {
      StackFrames frames = memory::capture_stack(1);
      StackFrames py = python_frames();
      frames.insert(frames.end(), std::make_move_iterator(py.begin()), std::make_move_iterator(py.end()));
      return frames;
    };
  }
  return {};  // "cpp" (capture_stack) and "none" (no frames): the C++ library's own
}

}  // namespace cudakit::python
