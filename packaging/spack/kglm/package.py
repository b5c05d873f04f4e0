# Spack package of kglm (man 7 kglm, INSTALLATION): copy this folder into a Spack repository
# (`spack repo add`), then e.g. `spack install kglm +cuda cuda_arch=70,80 +mpi`. Spack does not run
# on the machines that test kglm: ctest packaging loads this file against a model of Spack's
# package API (tests/install/spack_check.py) and checks its variants, dependencies and CMake flags.
import os

from spack.package import *


class Kglm(CMakePackage, CudaPackage):
    """kglm: knowledge-enhanced multilingual language models on HPC clusters. Wikidata and Wikipedia
    extraction, knowledge-graph cycles, code-switched and verbalized text, masked-LM and ELMo
    pretraining on MPI and NCCL, fine-tuning and probing, as composable command-line tools."""

    homepage = "https://kglm.invalid/"
    # No public release yet: `make dist` writes the tarball; point Spack at it with a mirror or
    # `spack install kglm@0.1.0 ^...` after `spack checksum` on the file.
    url = "file://{0}/kglm-0.1.0.tar.gz".format(os.environ.get("KGLM_DIST_DIR", "/tmp"))

    maintainers("kglm")
    license("Apache-2.0")

    version("0.1.0")

    variant("mpi", default=True, description="Multi-node training over MPI (and NCCL with +cuda)")
    # CudaPackage brings +cuda and cuda_arch; V100 is 70, A100 80, H100 90. CUDA 13 builds no sm_70.
    conflicts("cuda_arch=70", when="^cuda@13:", msg="CUDA 13 dropped sm_70 (V100): use cuda@12")
    conflicts("+cuda", when="cuda_arch=none", msg="give cuda_arch, e.g. cuda_arch=70,80,90")

    depends_on("cmake@3.22:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("googletest", type="build")
    depends_on("hdf5~mpi")
    depends_on("icu4c")
    depends_on("boost+program_options")
    depends_on("simdjson")
    depends_on("zstd")
    depends_on("zlib-api")
    depends_on("libdeflate")
    depends_on("bzip2")
    depends_on("libxml2")
    depends_on("libzip")
    depends_on("abseil-cpp")
    depends_on("sentencepiece")
    depends_on("random123")
    depends_on("openblas threads=openmp")
    depends_on("onednn")  # --precision bf16 on the CPU (2.x and 3.x APIs)
    depends_on("mpi", when="+mpi")
    depends_on("nccl", when="+cuda+mpi")
    depends_on("cuda@11.0:", when="+cuda")
    depends_on("python@3.8:", type="run")
    depends_on("py-matplotlib", type="run")  # kglm-plot
    # crcutil (TensorBoard's CRC-32C) has no Spack package: the system's libcrcutil-dev is used.

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("BUILD_TESTING", self.run_tests),
            self.define("KGLM_ARCH", ""),  # Spack's compiler wrappers choose the target
            self.define("KGLM_CUDA", "ON" if spec.satisfies("+cuda") else "OFF"),
            self.define("KGLM_MPI", "ON" if spec.satisfies("+mpi") else "OFF"),
            self.define("KGLM_NCCL", "ON" if spec.satisfies("+cuda+mpi") else "OFF"),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("KGLM_CUDA_ARCHS", ";".join(spec.variants["cuda_arch"].value)))
        return args
