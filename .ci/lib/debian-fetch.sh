# Sourced by .ci/install-jdk*: fetch Debian packages with apt into a scratch folder and unpack
# them, without root and without touching the machine's apt sources, state or packages. apt's own
# signature checks use the machine's Debian archive keyring.
#
#   debian_fetch WORK "SUITE..." PKG[=VERSION]...   downloads into WORK/debs and unpacks each
#                                                   package into WORK/root
#
# Each SUITE is "<archive URL> <suite>", e.g. "http://deb.debian.org/debian sid".

debian_fetch() {
  local work=$1 suites=$2
  shift 2
  local tool
  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null || {
      echo "$tool not found: this script needs a Debian or Ubuntu machine (or pass the JDK's" \
        "home with the property the script's header names)." >&2
      return 1
    }
  done
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -r "$keyring" ] || { echo "$keyring is missing (package debian-archive-keyring)" >&2; return 1; }
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
  : >"$work/sources.list"
  local s
  while read -r s; do
    [ -n "$s" ] && echo "deb [signed-by=$keyring] $s main" >>"$work/sources.list"
  done <<<"$suites"
  local apt=(apt-get -q
    -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
    -o Debug::NoLocking=true -o APT::Sandbox::User="$(id -un)")
  "${apt[@]}" update >"$work/update.log" 2>&1 || { cat "$work/update.log" >&2; return 1; }
  (cd "$work/debs" && "${apt[@]}" download "$@") || return 1
  local deb
  for deb in "$work"/debs/*.deb; do
    dpkg-deb -x "$deb" "$work/root"
  done
}

# The packages link configuration files into /etc/java-*-openjdk (shipped in the same package)
# and the CA store into ca-certificates-java: replace the first by copies from the unpacked tree,
# drop the second (the JVMs started here talk over loopback only, without TLS). Relative links
# (bin/java -> ../jre/bin/java) stay links: the programs find their libraries from $ORIGIN.
debian_jdk_fix_links() {
  local root=$1 home=$2 link target
  find "$home" -type l | while read -r link; do
    target=$(readlink "$link")
    case "$target" in
      /*) if [ -e "$root$target" ]; then cp -rL --remove-destination "$root$target" "$link"
          else rm -f "$link"; fi ;;
    esac
  done
}
