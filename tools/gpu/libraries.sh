# Which shared libraries a lent GPU machine brings itself, so that the bundle leaves them out
# (sourced by bundle.sh, campaign.sh and the self-containment test; see docs/gpu.md).
#
# glibc: always the machine's own. Its loader and libc must match each other, and the machine's
# glibc is newer than Debian 12's (Ubuntu 24.04's 2.39 against 2.36); programs built against an
# older glibc run on a newer one. bundle.sh records the newest GLIBC_ symbol version the bundle
# needs, and campaign.sh checks the machine's glibc against it before anything runs.
# Everything else the build links from Debian, the GCC 12 C++ runtime (libstdc++, libgcc_s,
# libgomp) included, travels in the bundle: its binaries then run on exactly the runtime they were
# built and tested with, whatever GCC the machine's image was made with. The bundle's folders go
# on LD_LIBRARY_PATH only for Tessera's processes, never for the machine's Python.
glibc_sonames=(
  ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1
  libresolv.so.2 libanl.so.1 libmvec.so.1 libBrokenLocale.so.1 libc_malloc_debug.so.0
  libthread_db.so.1 libnsl.so.1 libnss_files.so.2 libnss_dns.so.2 libnss_compat.so.2
  linux-vdso.so.1
)

# NVIDIA's libraries that come from the machine: the driver (which must match its kernel module),
# and cuDNN, NCCL and cuBLAS with what cuDNN loads at run time, from the machine's pip packages
# (nvidia-cudnn-cu13, nvidia-nccl-cu13, nvidia-cublas, nvidia-cuda-nvrtc, nvidia-nvjitlink). They
# are hundreds of MiB; the CUDA runtime (libcudart, under 1 MiB) travels, as compiled against.
# Extended regular expressions over sonames.
machine_cuda_patterns=(
  '^libcuda\.so' '^libnvidia-' '^libcudnn' '^libnccl\.so' '^libcublas' '^libcublasLt'
  '^libnvrtc' '^libnvJitLink'
)

# Open MPI plugins for fabrics a single GPU machine does not have (InfiniBand verbs, UCX,
# libfabric, PSM): left out with the libraries they need. One node's ranks talk through shared
# memory and TCP; Debian's own settings disable these transports too.
fabric_library_patterns=(
  '^libucp\.so' '^libucs\.so' '^libuct\.so' '^libucm\.so' '^libfabric\.so' '^libibverbs\.so'
  '^librdmacm\.so' '^libpsm_infinipath\.so' '^libpsm2\.so' '^libmca_common_(ucx|ofi|verbs)\.so'
)

# True when `soname` matches one of the patterns given after it.
matches_any() {
  local soname=$1 pattern
  shift
  for pattern in "$@"; do
    [[ $soname =~ $pattern ]] && return 0
  done
  return 1
}

is_glibc() {
  local soname=$1 each
  for each in "${glibc_sonames[@]}"; do
    [ "$soname" = "$each" ] && return 0
  done
  return 1
}
