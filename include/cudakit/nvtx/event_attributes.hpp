#pragma once
// @brief EventAttributes: what a range or mark carries besides its name — a category, a color and a
// payload (a number Nsight shows beside the range) — as nvtxEventAttributes_t wants it.
//
//   cudakit::nvtx::range_push({.name = "copy", .category = 2, .argb = 0xff00ff00,
//                              .payload = cudakit::nvtx::Payload::of(bytes)});

#include <cstdint>
#include <type_traits>

#include "cudakit/nvtx/registered_string.hpp"

namespace cudakit::nvtx {

// A number attached to a range or mark, of one of the types NVTX carries. Make one with of().
struct Payload {
  // The payload's type; `none` for no payload.
  enum class Type : std::uint8_t { none, uint64, int64, float64, uint32, int32, float32 };
  Type type = Type::none;  // which member of `value` is set
  union {
    std::uint64_t u64;
    std::int64_t i64;
    double f64;
    std::uint32_t u32;
    std::int32_t i32;
    float f32;
  } value{.u64 = 0};

  // A payload of `v`'s type: double, float, or the signed or unsigned integer of 32 or 64 bits that
  // holds T.
  // @tparam T an arithmetic type.
  // @param v the value.
  // @return the payload.
  template <class T>
  [[nodiscard]] static constexpr Payload of(T v) noexcept {
    Payload p;
    if constexpr (std::is_same_v<T, double>) { p.type = Type::float64; p.value.f64 = v; }
    else if constexpr (std::is_same_v<T, float>) { p.type = Type::float32; p.value.f32 = v; }
    else if constexpr (std::is_signed_v<T> && sizeof(T) <= 4) { p.type = Type::int32; p.value.i32 = v; }
    else if constexpr (std::is_signed_v<T>) { p.type = Type::int64; p.value.i64 = v; }
    else if constexpr (sizeof(T) <= 4) { p.type = Type::uint32; p.value.u32 = v; }
    else { p.type = Type::uint64; p.value.u64 = v; }
    return p;
  }
};

// What a range or mark carries: its name, category, color and payload. Every field is optional.
struct EventAttributes {
  const char* name = nullptr;                    // used when `registered` is null
  const RegisteredString* registered = nullptr;  // a hot name, registered once
  std::uint32_t category = 0;                    // 0: none (See name_category)
  std::uint32_t argb = 0;                        // 0: the tool's default color
  Payload payload{};  // a number shown beside the range

  // The text the trace hooks report (the registered string's, else `name`).
  // @return the name, or null when neither is set.
  [[nodiscard]] const char* text() const noexcept { return registered ? registered->text() : name; }
};

namespace detail {
// The NVTX form of `a`. Inline, and only fields set are written: the call is on the hot path.
[[nodiscard]] inline nvtxEventAttributes_t to_nvtx(const EventAttributes& a) noexcept {
  nvtxEventAttributes_t e{};
  e.version = NVTX_VERSION;
  e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  e.category = a.category;
  if (a.argb != 0) {
    e.colorType = NVTX_COLOR_ARGB;
    e.color = a.argb;
  }
  if (a.registered && a.registered->handle()) {
    e.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    e.message.registered = a.registered->handle();
  } else if (const char* text = a.text()) {
    e.messageType = NVTX_MESSAGE_TYPE_ASCII;
    e.message.ascii = text;
  }
  switch (a.payload.type) {
    case Payload::Type::none: break;
    case Payload::Type::uint64: e.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64; e.payload.ullValue = a.payload.value.u64; break;
    case Payload::Type::int64: e.payloadType = NVTX_PAYLOAD_TYPE_INT64; e.payload.llValue = a.payload.value.i64; break;
    case Payload::Type::float64: e.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE; e.payload.dValue = a.payload.value.f64; break;
    case Payload::Type::uint32: e.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32; e.payload.uiValue = a.payload.value.u32; break;
    case Payload::Type::int32: e.payloadType = NVTX_PAYLOAD_TYPE_INT32; e.payload.iValue = a.payload.value.i32; break;
    case Payload::Type::float32: e.payloadType = NVTX_PAYLOAD_TYPE_FLOAT; e.payload.fValue = a.payload.value.f32; break;
  }
  return e;
}
}  // namespace detail

}  // namespace cudakit::nvtx
