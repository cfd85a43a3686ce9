#!/usr/bin/env bash
# Step 2 of the GitHub Action (action.yml): runs `mcp-wirefuzz fuzz` on the user's server with the reports CI reads,
# records its exit code and never fails by itself, so the SARIF and JUnit uploads that follow still run; the
# action's last step fails the job on the recorded code.
#
# Environment (action.yml sets it from its inputs):
#   MCP_WIREFUZZ      the binary (default: mcp-wirefuzz on PATH)
#   INPUT_COMMAND     the server command, split into words as a shell would (quotes kept together), run with no
#                     shell; empty with INPUT_URL: a server someone else started
#   INPUT_URL         --url: the server's Streamable HTTP endpoint
#   INPUT_TIME        --time in seconds (default 60)
#   INPUT_BASELINE    --baseline FILE (known findings); empty: none
#   INPUT_ARGS        more fuzz options, split the same way (`--jobs 2 --sdk python`)
#   INPUT_OUT         the folder for the reports and case files (default wirefuzz-report)
# Writes to $GITHUB_OUTPUT: exit-code, verdict, report-dir, findings, and json, junit, sarif for the reports written
# (absolute paths); and a summary to $GITHUB_STEP_SUMMARY.
set -euo pipefail

bin=${MCP_WIREFUZZ:-mcp-wirefuzz}
out=${INPUT_OUT:-wirefuzz-report}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Words of a command line as POSIX shell quoting reads them (no expansion, nothing run), one per line of the
# array (each word ends with a NUL). python3 is on every GitHub-hosted runner.
words() {
    python3 -c 'import shlex, sys; sys.stdout.write("".join(word + "\0" for word in shlex.split(sys.argv[1])))' "$1"
}
for input in "${INPUT_COMMAND:-}" "${INPUT_ARGS:-}"; do
    words "$input" >/dev/null 2>&1 || { echo "::error title=mcp-wirefuzz::cannot split into words (a quote not closed?): $input"; exit 1; }
done
command_words=() extra_words=()
if [[ -n ${INPUT_COMMAND:-} ]]; then
    while IFS= read -r -d '' word; do command_words+=("$word"); done < <(words "$INPUT_COMMAND")
fi
if [[ -n ${INPUT_ARGS:-} ]]; then
    while IFS= read -r -d '' word; do extra_words+=("$word"); done < <(words "$INPUT_ARGS")
fi
if ((${#command_words[@]} == 0)) && [[ -z ${INPUT_URL:-} ]]; then
    echo "::error title=mcp-wirefuzz::no server: set the action's \`command\` (and/or \`url\`)"
    exit 1
fi

args=(fuzz --time "${INPUT_TIME:-60}" --out "$out/findings" --json "$out/report.json" --junit "$out/junit.xml"
    --sarif "$out/mcp-wirefuzz.sarif")
if [[ -n ${INPUT_BASELINE:-} ]]; then
    [[ -f $INPUT_BASELINE ]] || { echo "::error title=mcp-wirefuzz::baseline $INPUT_BASELINE: no such file"; exit 1; }
    args+=(--baseline "$INPUT_BASELINE")
fi
if [[ -n ${INPUT_URL:-} ]]; then
    args+=(--url "$INPUT_URL")
fi
# ${a[@]+"${a[@]}"}: an empty array under set -u in the bash 3.2 of macOS too.
args+=(${extra_words[@]+"${extra_words[@]}"})
if ((${#command_words[@]})); then
    args+=(-- "${command_words[@]}")
fi

echo "mcp-wirefuzz ${args[*]}" >&2
set +e
"$bin" "${args[@]}"
code=$?
set -e

case $code in
0) verdict="clean (or only baselined findings)" ;;
1) verdict="new findings" ;;
2) verdict="usage or harness error" ;;
4) verdict="inconclusive: a finding was still being confirmed when --confirm-time ran out" ;;
*) verdict="stopped (exit $code)" ;;
esac
echo "mcp-wirefuzz: exit $code, $verdict" >&2

if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    {
        echo "exit-code=$code"
        echo "verdict=$verdict"
        echo "report-dir=$out"
        # A report the run did not write (a usage error stops it first) is not named, so nothing uploads it.
        [[ -f $out/report.json ]] && echo "json=$out/report.json"
        [[ -f $out/junit.xml ]] && echo "junit=$out/junit.xml"
        [[ -f $out/mcp-wirefuzz.sarif ]] && echo "sarif=$out/mcp-wirefuzz.sarif"
        echo "findings=$out/findings"
    } >>"$GITHUB_OUTPUT"
fi
if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $out/report.json ]]; then
    python3 - "$out/report.json" "$code" "$verdict" >>"$GITHUB_STEP_SUMMARY" <<'PY' || true
import json, sys
report = json.load(open(sys.argv[1]))
print(f"### mcp-wirefuzz: {report.get('verdict')}, {sys.argv[3]} (exit {sys.argv[2]})\n")
print(f"{report.get('cases')} conversations, seed {report.get('seed')}, server {report.get('server')}\n")
findings = report.get("findings") or []
if findings:
    print("| rule | trigger | level | confirmation | baselined | fails the run | reproduce |")
    print("|---|---|---|---|---|---|---|")
    for f in findings:
        print(f"| `{f.get('rule')}` | `{f.get('trigger')}` | {f.get('level')} | {f.get('confirmation')} | "
              f"{f.get('baselined')} | {f.get('fails_run')} | `{f.get('reproduce')}` |")
stale = report.get("stale_baseline") or []
if stale:
    print("\nBaseline entries that did not break in this run (a short run may just not reach a rule: replay the "
          "entry's case file before removing it): " + ", ".join(f"`{entry}`" for entry in stale))
PY
fi
exit 0
