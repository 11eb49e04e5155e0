# bash completion for pathtracectl and pathregen (installed by make install
# as share/bash-completion/completions/pathtracectl and pathregen).
# pathtracectl lists its commands (--list-commands) and each command's
# options (COMMAND --list-options) from the tables its parser reads;
# pathregen's options come from its --help.

_pathtracectl()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$(pathtracectl --list-commands 2>/dev/null) --help --version" \
			-- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	--elf|--weights|--ppp-paths|--inline-module|-o|--output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--moddir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--mode)
		COMPREPLY=($(compgen -W "trace paths path-profile edges" -- "$cur"))
		return ;;
	--encoding)
		COMPREPLY=($(compgen -W "witness bits" -- "$cur"))
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(pathtracectl "$cmd" --list-options 2>/dev/null)" \
			-- "$cur"))
	elif [ "$cmd" = record ]; then
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
}

_pathregen()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	--format)
		COMPREPLY=($(compgen -W "text din champsim perfetto" -- "$cur"))
		return ;;
	--replan)
		COMPREPLY=($(compgen -W "heuristic profile" -- "$cur"))
		return ;;
	--path-codes)
		COMPREPLY=($(compgen -W "heuristic profile paths" -- "$cur"))
		return ;;
	-o|--output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(pathregen --help 2>/dev/null |
			grep -o -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -X '!*.bin' -- "$cur") $(compgen -d -- "$cur"))
	fi
}

complete -F _pathtracectl pathtracectl
complete -F _pathregen pathregen
