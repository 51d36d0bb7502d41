# lnrepro env-check probe: print raw facts about a machine, one "key<TAB>value" per line.
# POSIX sh only (dash, busybox ash); reads files with shell builtins, forks nothing per device.
# $1 is the root to look under ("" for /): a real host, a --sysroot fixture, or a container.
# The facts are judged on the host, by the same Python checks in every mode.
R="${1:-}"
T="$(printf '\t')"
fact() { printf '%s%s%s\n' "$1" "$T" "$2"; }
firstline() { v=""; [ -r "$1" ] && IFS= read -r v < "$1"; printf '%s' "$v"; }

fact probe 1
fact uid "$(id -u 2>/dev/null)"
fact gid "$(id -g 2>/dev/null)"

# /dev/tenstorrent/<N>: type (c char device, f plain file, o other), readable, writable
if [ -d "$R/dev/tenstorrent" ]; then
  fact dev_dir 1
  for d in "$R"/dev/tenstorrent/*; do
    [ -e "$d" ] || continue
    t=o; [ -c "$d" ] && t=c; [ -f "$d" ] && t=f
    r=0; [ -r "$d" ] && r=1
    w=0; [ -w "$d" ] && w=1
    fact dev "${d##*/} $t $r $w"
  done
else
  fact dev_dir 0
fi

# PCI functions: how many, and the Tenstorrent ones (vendor 0x1e52) with their device ids
n=0
for p in "$R"/sys/bus/pci/devices/*; do
  [ -e "$p/vendor" ] || continue
  n=$((n + 1))
  v=$(firstline "$p/vendor")
  if [ "$v" = "0x1e52" ]; then fact pci "${p##*/} $(firstline "$p/device")"; fi
done
fact pci_total "$n"
fact sys_dir "$([ -d "$R/sys" ] && echo 1 || echo 0)"

[ -d "$R/sys/module/tenstorrent" ] && fact module_loaded 1 || fact module_loaded 0
fact module_version "$(firstline "$R/sys/module/tenstorrent/version")"

hp="$R/sys/kernel/mm/hugepages/hugepages-1048576kB"
fact hugepages_1g_supported "$([ -d "$hp" ] && echo 1 || echo 0)"
fact hugepages_1g "$(firstline "$hp/nr_hugepages")"
fact hugepages_1g_free "$(firstline "$hp/free_hugepages")"

# mounts that matter: hugetlbfs anywhere, whatever is mounted at /sys
if [ -r "$R/proc/mounts" ]; then
  while IFS= read -r line; do
    case "$line" in
      *" hugetlbfs "*|*" /sys "*) fact mount "$line" ;;
    esac
  done < "$R/proc/mounts"
  fact mounts_readable 1
else
  fact mounts_readable 0
fi
fact cmdline "$(firstline "$R/proc/cmdline")"

n=0; for i in "$R"/sys/class/iommu/*; do [ -e "$i" ] && n=$((n + 1)); done
fact iommu_class "$n"
n=0; for i in "$R"/sys/kernel/iommu_groups/*; do [ -e "$i" ] && n=$((n + 1)); done
fact iommu_groups "$n"

# inside a container: the environment lnrepro passed, and the checkout it mounted
fact env_arch_name "${ARCH_NAME:-}"
fact env_tt_metal_home "${TT_METAL_HOME:-}"
if [ -n "${TT_METAL_HOME:-}" ]; then
  [ -d "$TT_METAL_HOME" ] && fact home_entry "."
  for f in build_metal.sh tt-train tt_metal .git; do
    [ -e "$TT_METAL_HOME/$f" ] && fact home_entry "$f"
  done
fi
exit 0
