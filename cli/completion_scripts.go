package cli

// completionScripts are what helikon completion prints. Each asks the
// binary being completed (helikon __complete WORD…) and offers what it
// prints; when it prints nothing, bash and zsh fall back to file names.
var completionScripts = map[string]string{
	// bash splits --flag=value at "=" (COMP_WORDBREAKS): the words are
	// glued back for helikon, and the part before the current word is cut
	// from its answers.
	"bash": `# bash completion for helikon, helikon-agent and helikon-k8s (helikon completion bash)
_helikon() {
  local i w words=() cur=${COMP_WORDS[COMP_CWORD]}
  for ((i = 1; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((${#words[@]} > 0)) && [[ $w == "=" || ${COMP_WORDS[i-1]} == "=" ]] && [[ ${words[${#words[@]}-1]} == -* ]]; then
      words[${#words[@]}-1]+=$w
    else
      words+=("$w")
    fi
  done
  local last=${words[${#words[@]}-1]} line IFS=$'\n'
  COMPREPLY=()
  for line in $("${COMP_WORDS[0]}" __complete "${words[@]}" 2>/dev/null); do
    COMPREPLY+=("${line#"${last%"$cur"}"}")
  done
}
complete -o default -F _helikon helikon helikon-agent helikon-k8s
`,
	"zsh": `#compdef helikon helikon-agent helikon-k8s
# zsh completion for helikon, helikon-agent and helikon-k8s (helikon completion zsh)
_helikon() {
  local -a replies
  replies=("${(@f)$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  replies=(${replies:#})
  if (( ${#replies} )); then
    compadd -Q -- "${replies[@]}"
  else
    _files
  fi
}
if (( $+functions[compdef] )); then
  compdef _helikon helikon helikon-agent helikon-k8s
fi
`,
	"fish": `# fish completion for helikon, helikon-agent and helikon-k8s (helikon completion fish)
function __helikon_complete
    set -l words (commandline -opc) (commandline -ct)
    $words[1] __complete $words[2..-1] 2>/dev/null
end
for c in helikon helikon-agent helikon-k8s
    complete -c $c -a '(__helikon_complete)'
end
`,
}
