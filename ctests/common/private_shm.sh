# Sourced at the top of a test script (`. .../private_shm.sh`): where possible (root, unshare),
# runs the script again ("$0" "$@") in a private mount namespace with an empty /dev/shm of its
# own, with PRIVATE_SHM=1 set there: then "nothing named rocshmem-* is left" can be checked
# exactly, whatever other jobs on the machine do. Otherwise the script goes on as it is, with
# PRIVATE_SHM unset.
if [ -z "${PRIVATE_SHM:-}" ] && command -v unshare >/dev/null 2>&1 &&
  unshare -m --propagation private sh -c 'mount -t tmpfs -o size=4g tmpfs /dev/shm' 2>/dev/null; then
  exec unshare -m --propagation private env PRIVATE_SHM=1 \
    sh -c 'mount -t tmpfs -o size=4g tmpfs /dev/shm && exec sh "$0" "$@"' "$0" "$@"
fi
