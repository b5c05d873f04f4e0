// `fatbinary` for the CUDA 12 toolchain that cmake/cuda12.sh assembles from PyPI's wheels.
//
// Written by hand because the wheels carry nvFatbin (the library) but not the `fatbinary` tool that
// clang's CUDA driver runs to bundle each file's device code. This takes the arguments clang passes,
//   fatbinary [--cuda] -64 --create OUT [-g] --image=profile=sm_70,file=A.cubin --image=profile=compute_70,file=A.s
// and writes OUT with nvFatbin: an sm_XX image is a cubin, a compute_XX image is PTX (JIT-compiled by
// the driver on newer GPUs).
#include <nvFatbin.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "fatbinary (kglm, over nvFatbin): %s\n", message.c_str());
  return 1;
}

bool check(nvFatbinResult result, const char* call, std::string& error) {
  if (result == NVFATBIN_SUCCESS) return true;
  error = std::string(call) + ": " + nvFatbinGetErrorString(result);
  return false;
}

bool read_file(const std::string& path, std::string& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

struct Image {
  std::string profile, file;
};

// "--image=profile=sm_70,file=PATH" (the path may hold commas: file= comes last).
bool parse_image(const std::string& value, Image& image) {
  const std::string profile_key = "profile=", file_key = ",file=";
  auto file_at = value.find(file_key);
  if (value.rfind(profile_key, 0) != 0 || file_at == std::string::npos) return false;
  image.profile = value.substr(profile_key.size(), file_at - profile_key.size());
  image.file = value.substr(file_at + file_key.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string output;
  std::vector<Image> images;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cuda" || arg == "-64" || arg == "-g") continue;  // 64-bit host is nvFatbin's default
    if (arg == "--create" && i + 1 < argc) {
      output = argv[++i];
    } else if (arg.rfind("--image=", 0) == 0) {
      Image image;
      if (!parse_image(arg.substr(8), image)) return fail("cannot read '" + arg + "'");
      images.push_back(image);
    } else {
      return fail("unsupported argument '" + arg + "'");
    }
  }
  if (output.empty() || images.empty()) return fail("usage: fatbinary -64 --create OUT --image=profile=P,file=F...");

  std::string error;
  nvFatbinHandle handle = nullptr;
  const char* options[] = {"-64"};
  if (!check(nvFatbinCreate(&handle, options, 1), "nvFatbinCreate", error)) return fail(error);
  bool ok = true;
  for (const auto& image : images) {
    std::string code;
    if (!read_file(image.file, code)) {
      error = "cannot read " + image.file;
      ok = false;
      break;
    }
    bool ptx = image.profile.rfind("compute_", 0) == 0;
    bool cubin = image.profile.rfind("sm_", 0) == 0;
    if (!ptx && !cubin) {
      error = "unknown profile '" + image.profile + "' (sm_XX or compute_XX)";
      ok = false;
      break;
    }
    std::string arch = image.profile.substr(ptx ? 8 : 3);
    if (ptx) {
      code.push_back('\0');  // nvFatbin reads PTX as a C string
      ok = check(nvFatbinAddPTX(handle, code.data(), code.size(), arch.c_str(), image.file.c_str(), ""),
                 "nvFatbinAddPTX", error);
    } else {
      ok = check(nvFatbinAddCubin(handle, code.data(), code.size(), arch.c_str(), image.file.c_str()),
                 "nvFatbinAddCubin", error);
    }
    if (!ok) {
      error += " (" + image.file + ")";
      break;
    }
  }
  std::vector<char> bytes;
  size_t size = 0;
  if (ok) ok = check(nvFatbinSize(handle, &size), "nvFatbinSize", error);
  if (ok) {
    bytes.resize(size);
    ok = check(nvFatbinGet(handle, bytes.data()), "nvFatbinGet", error);
  }
  nvFatbinDestroy(&handle);
  if (!ok) return fail(error);
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) return fail("cannot write " + output);
  return 0;
}
