#include "cudakit/tensor/cublas_error.hpp"

#include <cublas_api.h>
#include <gtest/gtest.h>

#include <string>

namespace {

TEST(CublasError, CarriesTheCublasStatusAndNamesIt) {
  try {
    throw cudakit::CublasError(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul", "cuBLASLt");
  } catch (const cudakit::Error& e) {
    EXPECT_EQ(e.status(), CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(e.api(), "cublasLtMatmul");
    const std::string what = dynamic_cast<const std::exception&>(e).what();
    EXPECT_NE(what.find("cublasLtMatmul"), std::string::npos) << what;
    EXPECT_NE(what.find("CUBLAS_STATUS_NOT_SUPPORTED: the requested functionality is not supported (cuBLASLt)"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("cublas_error_test.cpp"), std::string::npos) << what;  // no source location for users
    EXPECT_NE(std::string(e.location().file_name()).find("cublas_error_test.cpp"), std::string::npos);
    EXPECT_EQ(what.find("cudaErrorUnknown"), std::string::npos) << what;
  }
}

}  // namespace
