// An NVTX tool of the test suite's own: NVTX loads it through NVTX_INJECTION64_PATH at the first
// NVTX call of a process and calls InitializeInjectionNvtx2, where it installs its functions in
// NVTX's tables. It records every call it gets, one line each, for the test to read back through
// cudakit_test_nvtx_log() (found with dlsym). Each NVTX instance in the process (the test
// binary's, libcudakit's) initializes it once; both share the one log.

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace {

std::mutex g_mutex;
std::string g_log;
std::deque<std::string> g_names;  // domains' and registered strings' text; handles point here

void log_line(const std::string& line) {
  std::lock_guard lock(g_mutex);
  g_log += line;
  g_log += '\n';
}

const std::string* intern(const char* text) {
  std::lock_guard lock(g_mutex);
  g_names.emplace_back(text ? text : "");
  return &g_names.back();
}

std::string domain_name(nvtxDomainHandle_t d) {
  return d ? *reinterpret_cast<const std::string*>(d) : std::string("(default)");
}

std::string describe(const nvtxEventAttributes_t* a) {
  if (!a) return "(no attributes)";
  std::string s;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: s += "ascii:" + std::string(a->message.ascii); break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      s += "registered:" + *reinterpret_cast<const std::string*>(a->message.registered);
      break;
    default: s += "message-type:" + std::to_string(a->messageType); break;
  }
  s += " category:" + std::to_string(a->category);
  if (a->colorType == NVTX_COLOR_ARGB) s += " argb:" + std::to_string(a->color);
  switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: s += " u64:" + std::to_string(a->payload.ullValue); break;
    case NVTX_PAYLOAD_TYPE_INT64: s += " i64:" + std::to_string(a->payload.llValue); break;
    case NVTX_PAYLOAD_TYPE_DOUBLE: s += " f64:" + std::to_string(a->payload.dValue); break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: s += " u32:" + std::to_string(a->payload.uiValue); break;
    case NVTX_PAYLOAD_TYPE_INT32: s += " i32:" + std::to_string(a->payload.iValue); break;
    case NVTX_PAYLOAD_TYPE_FLOAT: s += " f32:" + std::to_string(a->payload.fValue); break;
    default: break;
  }
  return s;
}

std::uint64_t g_next_range = 1;

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  log_line("domain_create " + std::string(name));
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<std::string*>(intern(name)));
}
nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t d, const char* text) {
  log_line("register_string " + domain_name(d) + " " + text);
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<std::string*>(intern(text)));
}
void NVTX_API name_category(nvtxDomainHandle_t d, uint32_t id, const char* name) {
  log_line("name_category " + domain_name(d) + " " + std::to_string(id) + " " + name);
}
int NVTX_API push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  log_line("push " + domain_name(d) + " " + describe(a));
  return 0;
}
int NVTX_API pop(nvtxDomainHandle_t d) {
  log_line("pop " + domain_name(d));
  return 0;
}
nvtxRangeId_t NVTX_API start(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::uint64_t id;
  {
    std::lock_guard lock(g_mutex);
    id = g_next_range++;
  }
  log_line("start " + domain_name(d) + " " + describe(a) + " id:" + std::to_string(id));
  return id;
}
void NVTX_API end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  log_line("end " + domain_name(d) + " id:" + std::to_string(id));
}
void NVTX_API mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  log_line("mark " + domain_name(d) + " " + describe(a));
}

template <class F>
void install(NvtxFunctionTable table, unsigned size, unsigned id, F* f) {
  if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* cudakit_test_nvtx_log() {
  static thread_local std::string copy;
  std::lock_guard lock(g_mutex);
  copy = g_log;
  return copy.c_str();
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  install(table, size, NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  install(table, size, NVTX_CBID_CORE2_DomainNameCategoryA, &name_category);
  install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &push);
  install(table, size, NVTX_CBID_CORE2_DomainRangePop, &pop);
  install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, &start);
  install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, &end);
  install(table, size, NVTX_CBID_CORE2_DomainMarkEx, &mark);
  log_line("initialized");
  return 1;
}

}  // extern "C"
