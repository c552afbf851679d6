package cli

// The completion scripts of a2a completion. Each is written from the same
// complCommand list; only the shell's way of saying it differs. The
// command is the first word after a2a, and for push the second: a2a takes
// no flags before them (Main), so no script needs to skip flag values to
// find the command.

import (
	"fmt"
	"io"
	"strings"
)

// shQuote quotes s for bash, zsh and sh: in single quotes, where a quote
// is written by closing them, escaping it and opening them again.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// flagWords writes flags as typed, --name or -v, separated by spaces.
func flagWords(flags []complFlag) string {
	words := make([]string, len(flags))
	for i, f := range flags {
		words[i] = flagName(f.name)
	}
	return strings.Join(words, " ")
}

// bashCompletionMain is the part of the bash script that does not depend on
// the commands: _a2a, which reads COMP_WORDS and COMP_CWORD and sets
// COMPREPLY, asking the generated _a2a_subcommands, _a2a_flags, _a2a_value
// and _a2a_args.
const bashCompletionMain = `
# _a2a_compgen PREFIX ARGS... sets COMPREPLY to the words of compgen ARGS,
# each after PREFIX. compgen prints one a line, and file names may hold
# blanks: read lines.
_a2a_compgen() {
    local prefix=$1 line
    shift
    COMPREPLY=()
    while IFS= read -r line; do
        COMPREPLY+=("$line")
    done < <(compgen -P "$prefix" "$@")
}

# _a2a_trim WORD removes from each reply what bash does not replace: WORD up
# to its last = or : when COMP_WORDBREAKS holds that character.
_a2a_trim() {
    local word=$1 p= c i
    for ((i = 0; i < ${#word}; i++)); do
        c=${word:i:1}
        if [[ ($c == "=" || $c == ":") && $COMP_WORDBREAKS == *"$c"* ]]; then
            p=${word:0:i+1}
        fi
    done
    if [[ -n $p ]]; then
        for i in "${!COMPREPLY[@]}"; do
            COMPREPLY[i]=${COMPREPLY[i]#"$p"}
        done
    fi
    return 0
}

_a2a() {
    # bash splits --binding=rest and http://host:port at = and : into words
    # of their own: join them again.
    local words=() w i last=
    for ((i = 0; i <= COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if ((${#words[@]} > 0)) && [[ (-n $w && -z ${w//[=:]/}) || (-n $last && -z ${last//[=:]/}) ]]; then
            words[${#words[@]}-1]+=$w
        else
            words+=("$w")
        fi
        last=$w
    done
    local cword=$((${#words[@]} - 1))
    local cur=${words[cword]}
    COMPREPLY=()
    if ((cword == 1)); then
        if [[ $cur == -* ]]; then
            _a2a_reply=--help
        else
            _a2a_subcommands ''
        fi
        _a2a_compgen '' -W "$_a2a_reply" -- "$cur"
        return
    fi
    # The command, and n, the index of the word after it.
    local cmd=${words[1]} n=2
    _a2a_subcommands "$cmd"
    if [[ -n $_a2a_reply ]]; then
        if ((cword == 2)); then
            [[ $cur == -* ]] && _a2a_flags "$cmd"
            _a2a_compgen '' -W "$_a2a_reply" -- "$cur"
            return
        fi
        cmd="$cmd ${words[2]}" n=3
    fi
    if [[ $cmd == help ]]; then
        _a2a_reply=
        if ((cword == 2)); then
            _a2a_subcommands ''
        elif ((cword == 3)) && [[ -n ${words[2]} ]]; then
            _a2a_subcommands "${words[2]}"
        fi
        _a2a_compgen '' -W "$_a2a_reply" -- "$cur"
        return
    fi
    # The value of a flag: --flag=VALUE, or VALUE after --flag.
    local flag= value=$cur prefix=
    if [[ $cur == -*=* ]]; then
        flag=${cur%%=*} value=${cur#*=} prefix=${cur%%=*}=
    elif ((cword > n)) && [[ ${words[cword-1]} == -?* && ${words[cword-1]} != *=* ]]; then
        flag=${words[cword-1]}
    fi
    if [[ -n $flag ]]; then
        local name=${flag#-}
        name=${name#-}
        _a2a_value "$cmd" "$name"
        case $_a2a_kind in
        words)
            _a2a_compgen "$prefix" -W "$_a2a_reply" -- "$value"
            # sqlite: and postgres:// begin a value: no space after them.
            for w in "${COMPREPLY[@]}"; do
                [[ $w == *[:/] ]] && compopt -o nospace 2>/dev/null
            done
            ;;
        file)
            compopt -o filenames 2>/dev/null
            _a2a_compgen "$prefix" -f -- "$value"
            ;;
        dir)
            compopt -o filenames 2>/dev/null
            _a2a_compgen "$prefix" -d -- "$value"
            ;;
        esac
        if [[ -n $_a2a_kind || -n $prefix ]]; then
            _a2a_trim "$cur"
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        _a2a_flags "$cmd"
        _a2a_compgen '' -W "$_a2a_reply" -- "$cur"
    elif ((cword == n)); then
        _a2a_args "$cmd"
        _a2a_compgen '' -W "$_a2a_reply" -- "$cur"
    fi
    _a2a_trim "$cur"
}

complete -F _a2a a2a
`

// writeBashCompletion writes the bash script: the tables of cmds as case
// statements (no associative arrays, so that the bash 3.2 of macOS runs
// it), then bashCompletionMain.
func writeBashCompletion(w io.Writer, cmds []complCommand) {
	var b strings.Builder
	b.WriteString("# bash completion for a2a, written by 'a2a completion bash'.\n")
	b.WriteString("# Load it with: source <(a2a completion bash)\n\n")

	b.WriteString("# _a2a_subcommands CMD sets _a2a_reply to the commands under CMD ('' for a2a's).\n")
	b.WriteString("_a2a_subcommands() {\n    case $1 in\n")
	fmt.Fprintf(&b, "    '') _a2a_reply=%s ;;\n", shQuote(strings.Join(subcommands(""), " ")))
	for _, c := range cmds {
		if sub := subcommands(c.name); len(sub) > 0 {
			fmt.Fprintf(&b, "    %s) _a2a_reply=%s ;;\n", shQuote(c.name), shQuote(strings.Join(sub, " ")))
		}
	}
	b.WriteString("    *) _a2a_reply= ;;\n    esac\n}\n\n")

	b.WriteString("# _a2a_flags CMD sets _a2a_reply to the flags of CMD.\n")
	b.WriteString("_a2a_flags() {\n    case $1 in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "    %s) _a2a_reply=%s ;;\n", shQuote(c.name), shQuote(flagWords(c.flags)))
	}
	b.WriteString("    *) _a2a_reply=--help ;;\n    esac\n}\n\n")

	// Most flags take a value with nothing to offer: the default case.
	// The others are grouped by what they take, under one pattern per flag
	// name (*' json') where every command that has the flag means the same
	// by it, so that the script stays short.
	b.WriteString("# _a2a_value CMD FLAG sets _a2a_kind to what FLAG of CMD takes: words (then\n")
	b.WriteString("# in _a2a_reply), file, dir or any; '' for a flag without a value.\n")
	b.WriteString("_a2a_value() {\n    _a2a_kind= _a2a_reply=\n    case \"$1 $2\" in\n")
	type use struct{ cmd, action string }
	uses := map[string][]use{}
	var names []string
	for _, c := range cmds {
		for _, f := range c.flags {
			var action string
			switch f.value {
			case valueNone:
				action = "_a2a_kind="
			case valueAny:
				action = "_a2a_kind=any"
			case valueFile:
				action = "_a2a_kind=file"
			case valueDir:
				action = "_a2a_kind=dir"
			case valueWords:
				action = "_a2a_kind=words _a2a_reply=" + shQuote(strings.Join(f.words, " "))
			}
			if uses[f.name] == nil {
				names = append(names, f.name)
			}
			uses[f.name] = append(uses[f.name], use{c.name, action})
		}
	}
	var actions []string
	patterns := map[string][]string{}
	add := func(action, pattern string) {
		if action == "_a2a_kind=any" {
			return // the default
		}
		if patterns[action] == nil {
			actions = append(actions, action)
		}
		patterns[action] = append(patterns[action], pattern)
	}
	for _, name := range names {
		same := true
		for _, u := range uses[name] {
			same = same && u.action == uses[name][0].action
		}
		if same {
			add(uses[name][0].action, "*"+shQuote(" "+name))
			continue
		}
		for _, u := range uses[name] {
			add(u.action, shQuote(u.cmd+" "+name))
		}
	}
	for _, action := range actions {
		fmt.Fprintf(&b, "    %s)\n        %s ;;\n", strings.Join(patterns[action], " | "), action)
	}
	b.WriteString("    *) _a2a_kind=any ;;\n    esac\n}\n\n")

	b.WriteString("# _a2a_args CMD sets _a2a_reply to the words of the first argument of CMD.\n")
	b.WriteString("_a2a_args() {\n    case $1 in\n")
	for _, c := range cmds {
		if len(c.args) > 0 {
			fmt.Fprintf(&b, "    %s) _a2a_reply=%s ;;\n", shQuote(c.name), shQuote(strings.Join(c.args, " ")))
		}
	}
	b.WriteString("    *) _a2a_reply= ;;\n    esac\n}\n")
	b.WriteString(bashCompletionMain)
	io.WriteString(w, b.String())
}

// zshBracket escapes s for the [description] of an _arguments spec.
func zshBracket(s string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(s)
}

// zshDescribe escapes s for the name:description entries of _describe.
func zshDescribe(s string) string { return strings.ReplaceAll(s, ":", `\:`) }

// zshSpec is flag f as an _arguments spec, such as
// --binding=[binding to use...]:string:(jsonrpc rest grpc).
func zshSpec(f complFlag) string {
	spec := flagName(f.name)
	if f.repeatable {
		spec = "*" + spec
	}
	if f.value == valueNone {
		return spec + "[" + zshBracket(f.about) + "]"
	}
	if len(f.name) > 1 {
		spec += "=" // --name=VALUE or --name VALUE, as the flag package takes them
	}
	spec += "[" + zshBracket(f.about) + "]:" + strings.ToLower(strings.ReplaceAll(f.placeholder, ":", "")) + ":"
	switch f.value {
	case valueWords:
		spec += "(" + strings.Join(f.words, " ") + ")"
	case valueFile:
		spec += "_files"
	case valueDir:
		spec += "_files -/"
	default:
		spec += " " // a message, nothing to complete
	}
	return spec
}

// writeZshCompletion writes the zsh script: _a2a picks the command from
// the words, shifts it off and calls _arguments with the command's flags.
func writeZshCompletion(w io.Writer, cmds []complCommand) {
	var b strings.Builder
	b.WriteString("#compdef a2a\n")
	b.WriteString("# zsh completion for a2a, written by 'a2a completion zsh'.\n")
	b.WriteString("# Load it with: source <(a2a completion zsh)   (after compinit),\n")
	b.WriteString("# or save it as _a2a in a directory of $fpath.\n\n")

	about := map[string]string{}
	for _, c := range cmds {
		about[c.name] = c.about
	}
	b.WriteString("# _a2a_subcommands CMD offers the commands under CMD ('' for a2a's).\n")
	b.WriteString("_a2a_subcommands() {\n  local -a subcommands\n  case $1 in\n")
	writeGroup := func(parent string) {
		fmt.Fprintf(&b, "  %s)\n    subcommands=(\n", shQuote(parent))
		for _, name := range subcommands(parent) {
			full := strings.TrimSpace(parent + " " + name)
			fmt.Fprintf(&b, "      %s\n", shQuote(zshDescribe(name)+":"+about[full]))
		}
		b.WriteString("    ) ;;\n")
	}
	writeGroup("")
	for _, c := range cmds {
		if len(subcommands(c.name)) > 0 {
			writeGroup(c.name)
		}
	}
	b.WriteString("  esac\n  _describe -t commands 'a2a command' subcommands\n}\n\n")

	b.WriteString("_a2a() {\n")
	b.WriteString("  if (( CURRENT == 2 )); then\n    _a2a_subcommands ''\n    return\n  fi\n")
	b.WriteString("  local cmd=$words[2]\n")
	b.WriteString("  if [[ $cmd == help ]]; then\n")
	b.WriteString("    if (( CURRENT == 3 )); then\n      _a2a_subcommands ''\n")
	b.WriteString("    elif (( CURRENT == 4 )); then\n      _a2a_subcommands $words[3]\n    fi\n    return\n  fi\n")
	b.WriteString("  shift words\n  (( CURRENT-- ))\n")
	b.WriteString("  case $cmd in\n")
	for _, c := range cmds {
		if strings.Contains(c.name, " ") || len(subcommands(c.name)) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s)\n    if (( CURRENT == 2 )); then\n      _a2a_subcommands %s\n      return\n    fi\n", shQuote(c.name), shQuote(c.name))
		b.WriteString("    cmd=\"$cmd $words[2]\"\n    shift words\n    (( CURRENT-- ))\n    ;;\n")
	}
	b.WriteString("  esac\n")
	b.WriteString("  case $cmd in\n")
	for _, c := range cmds {
		if c.name == "help" {
			continue
		}
		fmt.Fprintf(&b, "  %s)\n    _arguments -S \\\n", shQuote(c.name))
		for _, f := range c.flags {
			fmt.Fprintf(&b, "      %s \\\n", shQuote(zshSpec(f)))
		}
		if len(c.args) > 0 {
			fmt.Fprintf(&b, "      %s\n", shQuote("1:"+strings.ToLower(c.argName)+":("+strings.Join(c.args, " ")+")"))
		} else {
			fmt.Fprintf(&b, "      %s\n", shQuote("*:argument: "))
		}
		b.WriteString("    ;;\n")
	}
	b.WriteString("  esac\n}\n\n")
	b.WriteString("if [[ $funcstack[1] == _a2a ]]; then\n  _a2a \"$@\"\nelse\n  compdef _a2a a2a\nfi\n")
	io.WriteString(w, b.String())
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// writeFishCompletion writes the fish script: __a2a_command names the
// command being completed, and a complete line per command, flag and value
// list asks for it.
func writeFishCompletion(w io.Writer, cmds []complCommand) {
	var b strings.Builder
	b.WriteString("# fish completion for a2a, written by 'a2a completion fish'.\n")
	b.WriteString("# Load it with: a2a completion fish | source\n")
	b.WriteString("# (or save it as ~/.config/fish/completions/a2a.fish)\n\n")
	var groups []string
	for _, c := range cmds {
		if len(subcommands(c.name)) > 0 {
			groups = append(groups, c.name)
		}
	}
	b.WriteString(`# __a2a_command prints the command being completed: "send", "push create",
# "help push", ...; nothing before one is typed.
function __a2a_command
    set -l words (commandline -opc)
    set -e words[1]
    if test (count $words) -eq 0
        return
    end
    switch $words[1]
        case help ` + strings.Join(groups, " ") + `
            if test (count $words) -ge 2
                echo "$words[1] $words[2]"
                return
            end
    end
    echo $words[1]
end

# __a2a_is CMD: the command being completed is CMD.
function __a2a_is
    set -l cmd (__a2a_command)
    test "$cmd" = "$argv[1]"
end

complete -c a2a -f
`)
	about := map[string]string{}
	for _, c := range cmds {
		about[c.name] = c.about
	}
	offer := func(when, parent string) {
		for _, name := range subcommands(parent) {
			full := strings.TrimSpace(parent + " " + name)
			fmt.Fprintf(&b, "complete -c a2a -n %s -a %s -d %s\n", fishQuote("__a2a_is "+fishQuote(when)), fishQuote(name), fishQuote(about[full]))
		}
	}
	offer("", "")
	offer("help", "")
	for _, g := range groups {
		offer(g, g)
		offer("help "+g, g)
	}
	for _, c := range cmds {
		if c.name == "help" {
			continue
		}
		cond := "-n " + fishQuote("__a2a_is "+fishQuote(c.name))
		if len(c.args) > 0 {
			fmt.Fprintf(&b, "complete -c a2a %s -a %s\n", cond, fishQuote(strings.Join(c.args, " ")))
		}
		for _, f := range c.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			switch f.value {
			case valueAny:
				opt += " -x"
			case valueWords:
				opt += " -x -a " + fishQuote(strings.Join(f.words, " "))
			case valueFile:
				opt += " -r -F"
			case valueDir:
				opt += " -x -a '(__fish_complete_directories (commandline -ct))'"
			}
			fmt.Fprintf(&b, "complete -c a2a %s %s -d %s\n", cond, opt, fishQuote(f.about))
		}
	}
	io.WriteString(w, b.String())
}
