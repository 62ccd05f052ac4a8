// A C++17 backend written the way Triton's public example backends are
// (state classes, RAII over API objects, TRITONSERVER_Error* returned and
// checked), using nothing but Nereid's triton/core headers. It proves that
// such a backend compiles against our headers unchanged. Behaviour: OUT0 =
// IN0 (same datatype, shape and bytes). Entry points run on the server's
// loading threads and on each instance's execute thread.
#include <time.h>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "triton/core/tritonbackend.h"

#define CPP_MINIMAL_EXPORT __attribute__((visibility("default")))

namespace cpp_minimal {

// ---- RAII over API objects --------------------------------------------------

struct ErrorDeleter {
  void operator()(TRITONSERVER_Error *e) const { TRITONSERVER_ErrorDelete(e); }
};
using Error = std::unique_ptr<TRITONSERVER_Error, ErrorDeleter>;

struct MessageDeleter {
  void operator()(TRITONSERVER_Message *m) const { Error(TRITONSERVER_MessageDelete(m)); }
};
using Message = std::unique_ptr<TRITONSERVER_Message, MessageDeleter>;

// An unsent response is deleted; Send() hands it to the server.
class Response {
 public:
  explicit Response(TRITONBACKEND_Response *r) : r_(r) {}
  ~Response() {
    if (r_ != nullptr) Error(TRITONBACKEND_ResponseDelete(r_));
  }
  Response(const Response &) = delete;
  Response &operator=(const Response &) = delete;
  TRITONBACKEND_Response *get() const { return r_; }
  TRITONSERVER_Error *Send(TRITONSERVER_Error *error) {
    TRITONBACKEND_Response *r = r_;
    r_ = nullptr;
    return TRITONBACKEND_ResponseSend(r, TRITONSERVER_RESPONSE_COMPLETE_FINAL, error);
  }

 private:
  TRITONBACKEND_Response *r_;
};

#define RETURN_IF_ERROR(X)                      \
  do {                                          \
    TRITONSERVER_Error *rie_err__ = (X);        \
    if (rie_err__ != nullptr) return rie_err__; \
  } while (false)

TRITONSERVER_Error *NewError(TRITONSERVER_Error_Code code, const std::string &msg) {
  return TRITONSERVER_ErrorNew(code, msg.c_str());
}

void LogError(TRITONSERVER_Error *err, const char *what) {
  if (err == nullptr) return;
  Error owned(err);
  std::string msg =
      std::string("cpp_minimal: ") + what + ": " + TRITONSERVER_ErrorMessage(err);
  Error(TRITONSERVER_LogMessage(TRITONSERVER_LOG_ERROR, __FILE__, __LINE__, msg.c_str()));
}

uint64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// ---- state ------------------------------------------------------------------

class ModelState {
 public:
  static TRITONSERVER_Error *Create(TRITONBACKEND_Model *model, ModelState **state);
  int64_t MaxBatchSize() const { return max_batch_size_; }
  const std::string &Name() const { return name_; }

 private:
  ModelState(std::string name, int64_t max_batch_size)
      : name_(std::move(name)), max_batch_size_(max_batch_size) {}
  std::string name_;
  int64_t max_batch_size_;
};

// The config arrives as JSON; this backend needs only two facts from it, so
// it looks for them in the text rather than carrying a JSON library.
TRITONSERVER_Error *ModelState::Create(TRITONBACKEND_Model *model, ModelState **state) {
  const char *name = nullptr;
  RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  TRITONSERVER_Message *raw = nullptr;
  RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &raw));
  Message config(raw);
  const char *json = nullptr;
  size_t size = 0;
  RETURN_IF_ERROR(TRITONSERVER_MessageSerializeToJson(config.get(), &json, &size));
  std::string text(json, size);
  if (text.find("\"IN0\"") == std::string::npos ||
      text.find("\"OUT0\"") == std::string::npos) {
    return NewError(
        TRITONSERVER_ERROR_INVALID_ARG,
        std::string("model '") + name + "': cpp_minimal needs input IN0 and output OUT0");
  }
  int64_t max_batch_size = 0;
  const std::string key = "\"max_batch_size\":";
  size_t at = text.find(key);
  if (at != std::string::npos) {
    max_batch_size = std::strtoll(text.c_str() + at + key.size(), nullptr, 10);
  }
  *state = new ModelState(name, max_batch_size);
  return nullptr;
}

class InstanceState {
 public:
  InstanceState(ModelState *model, TRITONBACKEND_ModelInstance *instance)
      : model_(model), instance_(instance) {}
  ModelState *Model() const { return model_; }
  TRITONBACKEND_ModelInstance *Instance() const { return instance_; }

 private:
  ModelState *model_;
  TRITONBACKEND_ModelInstance *instance_;
};

// ---- execute ----------------------------------------------------------------

TRITONSERVER_Error *OutputRequested(TRITONBACKEND_Request *request, bool *requested) {
  uint32_t count = 0;
  RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(request, &count));
  *requested = false;
  for (uint32_t i = 0; i < count && !*requested; ++i) {
    const char *name = nullptr;
    RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(request, i, &name));
    *requested = (name != nullptr && std::strcmp(name, "OUT0") == 0);
  }
  return nullptr;
}

// Copies IN0 into OUT0 buffer by buffer, so an input split over several
// buffers arrives gathered without an intermediate copy.
TRITONSERVER_Error *Fill(TRITONBACKEND_Request *request, TRITONBACKEND_Response *response,
                         const ModelState &model, uint64_t *batch_size) {
  TRITONBACKEND_Input *input = nullptr;
  RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, "IN0", &input));
  TRITONSERVER_DataType datatype;
  const int64_t *shape = nullptr;
  uint32_t dims = 0, buffers = 0;
  uint64_t byte_size = 0;
  RETURN_IF_ERROR(TRITONBACKEND_InputProperties(input, nullptr, &datatype, &shape, &dims,
                                                &byte_size, &buffers));
  *batch_size = (model.MaxBatchSize() > 0 && dims > 0) ? uint64_t(shape[0]) : 1;
  bool requested = false;
  RETURN_IF_ERROR(OutputRequested(request, &requested));
  if (!requested) return nullptr;
  TRITONBACKEND_Output *output = nullptr;
  RETURN_IF_ERROR(
      TRITONBACKEND_ResponseOutput(response, &output, "OUT0", datatype, shape, dims));
  void *out = nullptr;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t type_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(output, &out, byte_size, &type, &type_id));
  uint64_t offset = 0;
  for (uint32_t b = 0; b < buffers; ++b) {
    const void *in = nullptr;
    uint64_t size = 0;
    TRITONSERVER_MemoryType in_type = TRITONSERVER_MEMORY_CPU;
    int64_t in_type_id = 0;
    RETURN_IF_ERROR(
        TRITONBACKEND_InputBuffer(input, b, &in, &size, &in_type, &in_type_id));
    if (type == TRITONSERVER_MEMORY_GPU || in_type == TRITONSERVER_MEMORY_GPU ||
        size > byte_size - offset) {
      return NewError(TRITONSERVER_ERROR_UNSUPPORTED, "cpp_minimal: IN0 data not usable");
    }
    std::memcpy(static_cast<char *>(out) + offset, in, size);
    offset += size;
  }
  return nullptr;
}

// One request: respond (with the error if any), report, release.
bool Answer(const InstanceState &state, TRITONBACKEND_Request *request,
            uint64_t *batch_size) {
  uint64_t start = NowNs();
  TRITONBACKEND_Response *raw = nullptr;
  TRITONSERVER_Error *err = TRITONBACKEND_ResponseNew(&raw, request);
  Response response(raw);
  if (err == nullptr) err = Fill(request, response.get(), *state.Model(), batch_size);
  uint64_t end = NowNs();
  bool ok = (err == nullptr);
  if (response.get() != nullptr) LogError(response.Send(err), "sending a response");
  if (err != nullptr) TRITONSERVER_ErrorDelete(err);
  LogError(TRITONBACKEND_ModelInstanceReportStatistics(state.Instance(), request, ok,
                                                       start, start, end, NowNs()),
           "reporting statistics");
  LogError(TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL),
           "releasing a request");
  return ok;
}

template <typename T>
TRITONSERVER_Error *Guarded(T &&body) noexcept {
  try {
    return body();
  } catch (const std::exception &e) {
    return NewError(TRITONSERVER_ERROR_INTERNAL, std::string("cpp_minimal: ") + e.what());
  }
}

}  // namespace cpp_minimal

using namespace cpp_minimal;

extern "C" {

CPP_MINIMAL_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *) {
  uint32_t major = 0, minor = 0;
  RETURN_IF_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
  if (major != TRITONBACKEND_API_VERSION_MAJOR ||
      minor < TRITONBACKEND_API_VERSION_MINOR) {
    return NewError(TRITONSERVER_ERROR_UNSUPPORTED, "cpp_minimal: backend API too old");
  }
  return nullptr;
}

CPP_MINIMAL_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(
    TRITONBACKEND_Model *model) {
  return Guarded([&]() -> TRITONSERVER_Error * {
    ModelState *state = nullptr;
    RETURN_IF_ERROR(ModelState::Create(model, &state));
    std::unique_ptr<ModelState> owned(state);
    RETURN_IF_ERROR(TRITONBACKEND_ModelSetState(model, state));
    owned.release();  // the model owns it until ModelFinalize
    return nullptr;
  });
}

CPP_MINIMAL_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(
    TRITONBACKEND_Model *model) {
  void *state = nullptr;
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &state));
  delete static_cast<ModelState *>(state);
  return nullptr;
}

CPP_MINIMAL_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance) {
  return Guarded([&]() -> TRITONSERVER_Error * {
    TRITONBACKEND_Model *model = nullptr;
    void *model_state = nullptr;
    RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
    RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &model_state));
    auto state =
        std::make_unique<InstanceState>(static_cast<ModelState *>(model_state), instance);
    RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceSetState(instance, state.get()));
    state.release();  // the instance owns it until ModelInstanceFinalize
    return nullptr;
  });
}

CPP_MINIMAL_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance) {
  void *state = nullptr;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  delete static_cast<InstanceState *>(state);
  return nullptr;
}

CPP_MINIMAL_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  void *vstate = nullptr;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vstate));
  const InstanceState &state = *static_cast<InstanceState *>(vstate);
  // From here on the requests are ours: every one is answered and released.
  uint64_t start = NowNs(), total = 0;
  for (uint32_t i = 0; i < request_count; ++i) {
    uint64_t batch_size = 1;
    if (Answer(state, requests[i], &batch_size)) total += batch_size;
  }
  uint64_t end = NowNs();
  if (total > 0) {
    LogError(TRITONBACKEND_ModelInstanceReportBatchStatistics(instance, total, start,
                                                              start, end, end),
             "reporting batch statistics");
  }
  return nullptr;
}

}  // extern "C"
