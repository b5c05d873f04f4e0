#!/usr/bin/env python3
"""spack_check.py PACKAGE.py: kglm's Spack package, checked where Spack does not run. The file is
executed against a small model of the part of Spack's package API it uses (spack.package: the
CMakePackage and CudaPackage base classes, the version / variant / depends_on / conflicts /
maintainers / license directives, spec.satisfies and the variant values), then:
- its variants: +mpi (CudaPackage brings +cuda and cuda_arch), and cuda_arch=70 refused with CUDA 13;
- its dependencies: every library kglm's CMake build looks for, by Spack's package names;
- cmake_args() for four specs: the KGLM_CUDA, KGLM_MPI, KGLM_NCCL and KGLM_CUDA_ARCHS flags that
  CMakeLists.txt reads (cmake/KglmDependencies.cmake), for +cuda cuda_arch=70,80 +mpi and the others.
Prints one line per check; exits 1 on the first failure."""
import sys
import types

directives = []


def directive(kind):
    return lambda *args, **kwargs: directives.append((kind, args, kwargs))


class Variant:
    def __init__(self, value):
        self.value = value


class Spec:
    def __init__(self, variants):
        self.variants = {k: Variant(v) for k, v in variants.items()}

    def satisfies(self, constraint):
        for part in constraint.replace("+", " +").replace("~", " ~").split():
            if part.startswith("+") and self.variants[part[1:]].value is not True:
                return False
            if part.startswith("~") and self.variants[part[1:]].value is not False:
                return False
            if "=" in part:
                name, value = part.split("=")
                if value == "none" and self.variants[name].value:
                    return False
        return True


class CMakePackage:
    run_tests = False

    def define(self, name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"


class CudaPackage:  # Spack's brings the variants cuda and cuda_arch
    pass


api = types.ModuleType("spack.package")
api.CMakePackage, api.CudaPackage = CMakePackage, CudaPackage
for kind in ("version", "variant", "depends_on", "conflicts", "maintainers", "license"):
    setattr(api, kind, directive(kind))
api.__all__ = [name for name in vars(api) if not name.startswith("_")]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = api


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    path = sys.argv[1]
    scope = {"__name__": "kglm_package"}
    exec(compile(open(path).read(), path, "exec"), scope)
    package = scope.get("Kglm")
    if package is None or not issubclass(package, CMakePackage) or not issubclass(package, CudaPackage):
        fail("no class Kglm(CMakePackage, CudaPackage)")
    variants = {args[0]: kwargs for kind, args, kwargs in directives if kind == "variant"}
    if "mpi" not in variants:
        fail("no variant mpi")
    conflicts = [(args[0], kwargs.get("when", "")) for kind, args, kwargs in directives if kind == "conflicts"]
    if ("cuda_arch=70", "^cuda@13:") not in conflicts:
        fail("no conflict between cuda_arch=70 and CUDA 13 (which cannot build sm_70)")
    print("ok: variant +mpi, CudaPackage's +cuda and cuda_arch; cuda_arch=70 conflicts with CUDA 13")
    versions = [args[0] for kind, args, _ in directives if kind == "version"]
    project = open(sys.argv[2]).read() if len(sys.argv) > 2 else ""
    if versions and project and f"project(kglm VERSION {versions[0]}" not in project:
        fail(f"version {versions[0]} is not CMakeLists.txt's")
    names = {args[0].split()[0].split("@")[0].split("+")[0].split("~")[0] for kind, args, _ in directives
             if kind == "depends_on"}
    wanted = {"cmake", "hdf5", "icu4c", "boost", "simdjson", "zstd", "zlib-api", "libdeflate", "bzip2", "libxml2",
              "libzip", "abseil-cpp", "sentencepiece", "random123", "openblas", "onednn", "mpi", "nccl", "cuda", "py-matplotlib",
              "googletest"}
    if wanted - names:
        fail(f"missing dependencies: {sorted(wanted - names)}")
    print(f"ok: {len(names)} dependencies by Spack's names, every library the CMake build looks for")

    cases = [
        ({"cuda": True, "mpi": True, "cuda_arch": ("70", "80")},
         {"KGLM_CUDA": "ON", "KGLM_MPI": "ON", "KGLM_NCCL": "ON", "KGLM_CUDA_ARCHS": "70;80"}),
        ({"cuda": True, "mpi": False, "cuda_arch": ("90",)},
         {"KGLM_CUDA": "ON", "KGLM_MPI": "OFF", "KGLM_NCCL": "OFF", "KGLM_CUDA_ARCHS": "90"}),
        ({"cuda": False, "mpi": True, "cuda_arch": ()},
         {"KGLM_CUDA": "OFF", "KGLM_MPI": "ON", "KGLM_NCCL": "OFF", "KGLM_CUDA_ARCHS": None}),
        ({"cuda": False, "mpi": False, "cuda_arch": ()},
         {"KGLM_CUDA": "OFF", "KGLM_MPI": "OFF", "KGLM_NCCL": "OFF", "KGLM_CUDA_ARCHS": None}),
    ]
    for variants_of_spec, expected in cases:
        instance = package()
        instance.spec = Spec(variants_of_spec)
        flags = dict(arg[2:].split("=", 1) for arg in instance.cmake_args())
        for name, value in expected.items():
            if flags.get(name) != value:
                fail(f"cmake_args() for {variants_of_spec}: -D{name}={flags.get(name)}, not {value}")
    print("ok: cmake_args() gives KGLM_CUDA, KGLM_MPI, KGLM_NCCL and KGLM_CUDA_ARCHS for +cuda/~cuda, +mpi/~mpi")


if __name__ == "__main__":
    main()
