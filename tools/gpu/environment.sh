# The environment a packed program runs in, shared by campaign.sh and the self-containment test
# (tests/gpu/bundle_self_contained.sh), so that CI checks the very settings the GPU machine gets.
#
# bundle_environment BUNDLE [LIBRARY_DIR...] sets the array bundle_env to VAR=value words for
# env(1): the loader searches the bundle's library folders, then the LIBRARY_DIRs given (the pip
# packages' NVIDIA folders); Open MPI and PMIx find their plugins, help texts and settings in the
# bundle instead of where Debian put them; hwloc loads none of its optional plugins (GL, OpenCL,
# PCI, libxml: device details that Open MPI uses only across nodes, and X11 or libxml2 to load).
bundle_environment() {
  local bundle=$1 folder library_path= open_mpi_prefix pmix_prefix
  shift
  while read -r folder; do library_path+="$bundle/$folder:"; done <"$bundle/library_dirs.txt"
  for folder in "$@"; do library_path+="$folder:"; done
  open_mpi_prefix=$(awk '/^open_mpi_prefix:/ { print $2 }' "$bundle/manifest.txt")
  pmix_prefix=$(awk '/^pmix_prefix:/ { print $2 }' "$bundle/manifest.txt")
  bundle_env=(
    "LD_LIBRARY_PATH=${library_path%:}"
    "OPAL_PREFIX=$bundle/root$open_mpi_prefix"  # rebases every Open MPI path under its prefix
    "OPAL_SYSCONFDIR=$bundle/root$open_mpi_prefix/etc"  # Debian's /etc/openmpi is outside it
    "HWLOC_PLUGINS_PATH=$bundle/hwloc-plugins"  # an empty folder
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # both machines run us as root
    # One node, no ssh: processes start locally. A program started without mpirun (one rank)
    # starts the bundle's orted, found on PATH.
    OMPI_MCA_plm=isolated "PATH=$bundle/bin:$PATH"
  )
  # Debian's PMIx prefix is /usr with its files in a folder of their own: PMIX_PREFIX would not
  # rebase them, its folder variables do.
  if [ -n "$pmix_prefix" ]; then
    bundle_env+=("PMIX_PKGLIBDIR=$bundle/root$pmix_prefix/lib/pmix"
                 "PMIX_PKGDATADIR=$bundle/root$pmix_prefix/share/pmix")
  fi
}
