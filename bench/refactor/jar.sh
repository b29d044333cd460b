# Sourced by same-results.sh and same-shapes.sh: jar_of ARG prints the infersim.jar that ARG names, ARG being a jar or
# a checkout (whose cli/target/infersim.jar is built when missing).
jar_of() {
  local arg="$1"
  if [[ -f "$arg" ]]; then
    readlink -f "$arg"
  elif [[ -d "$arg" ]]; then
    local root
    root="$(readlink -f "$arg")"
    if [[ ! -f "$root/cli/target/infersim.jar" ]]; then
      echo "building $root/cli/target/infersim.jar ..." >&2
      (cd "$root" && mvn -B -q -o -Dstyle.color=never -pl cli -am package -DskipTests >&2)
    fi
    echo "$root/cli/target/infersim.jar"
  else
    echo "$0: $arg is neither a jar nor a checkout" >&2
    exit 2
  fi
}
