# detective-tui probe — POSIX sh + coreutils. Prints sentinel records (probes/README.md).
# Inputs (environment): DT_ROOT (root prefix, "" = this host), DT_PYTHONS (newline-separated
# interpreters), DT_STEP_TIMEOUT (seconds per external command). Never imports torch/FlashInfer.
# pyfacts.py is appended by probes.probe_script() as the body of the DT_PYFACTS heredoc.

DT_VERSION='@DT_PROBE_VERSION@'
DT_HOSTHELPER='@DT_HOSTHELPER@'
R=${DT_ROOT:-}
R=${R%/}
DT_ROOT=$R
export DT_ROOT
T=${DT_STEP_TIMEOUT:-10}
TAB='	'
NL='
'
TO=
command -v timeout >/dev/null 2>&1 && TO=timeout
DONE=0
TOTAL=8
read -r T0 _ </proc/uptime 2>/dev/null || T0=

CR=$(printf '\r')
ELF64=$(printf '\177ELF\002\001') # a 64-bit little-endian ELF file begins so
# recline KIND FIELD… — one record line (without its newline) in _l; rec prints it. Every
# field is escaped (esc), so no value can end a record or start another.
recline() {
  _l='@@DT1'
  for _f in "$@"; do
    case $_f in
      *[\\"$TAB$NL$CR"]* | *@@DT1*) esc "$_f" && _f=$_e ;;
    esac
    _l="$_l$TAB$_f"
  done
}

# esc TEXT — TEXT as a record field, in _e: a backslash is `\\`, a tab, newline or carriage
# return `\011` `\012` `\015`, and the sentinel's D `\104` (the escapes of `arg` records).
esc() {
  _ev=$1 _e=
  while :; do
    case $_ev in *[\\"$TAB$NL$CR"]*) ;; *) break ;; esac
    _eh=${_ev%%[\\"$TAB$NL$CR"]*}
    _ev=${_ev#"$_eh"}
    _ec=${_ev%"${_ev#?}"}
    _ev=${_ev#?}
    case $_ec in
      \\) _e="$_e$_eh\\\\" ;;
      "$TAB") _e="$_e$_eh\\011" ;;
      "$NL") _e="$_e$_eh\\012" ;;
      *) _e="$_e$_eh\\015" ;;
    esac
  done
  _e=$_e$_ev
  while :; do
    case $_e in *@@DT1*) ;; *) break ;; esac
    _e="${_e%%@@DT1*}@@\\104T1${_e#*@@DT1}"
  done
}

rec() {
  recline "$@"
  printf '%s\n' "$_l"
}

step() {
  DONE=$((DONE + 1))
  rec step "$1" "$DONE" "$TOTAL"
}

deadline() {
  if [ -n "$TO" ]; then "$TO" -k 2 "$T" "$@"; else "$@"; fi
}

# ---- the host helper (probes/hosthelper.py): one Python run instead of the processes -------
# hx_boot starts it once where this machine has a trusted python3 >= 3.8 (DT_PROBE_PATH auto or
# py; sh: never). It answers in-process what readlink, ls, od, tr, grep, head, tail, wc, stat,
# cat, uname, id, getent, env would print, and starts the programs that must run itself, each
# under the step deadline in a process group of its own (no timeout or setsid process).
# Every decision stays here: each call site below asks it for exactly what its tool printed.
# hx OP ARG… — one request on this job's channel (HCH: 0 the probe, 1 the nvidia-smi job, 2
# the login job): the output in _ho, the status in _hr, an extra value in _hx.
HXD=
HXPID=
HCH=0
hx() {
  _hl=
  for _f in "$@"; do
    case $_f in *[\\"$TAB$NL$CR"]* | *@@DT1*) esc "$_f" && _f=$_e ;; esac
    _hl="$_hl${_hl:+$TAB}$_f"
  done
  # its FIFOs gone (a temp cleaner): no answer, and the sh path from here on
  if [ -p "$HXD/req.$HCH" ] && [ -p "$HXD/rep.$HCH" ] &&
    { printf '%s\n' "$_hl" >"$HXD/req.$HCH"; } 2>/dev/null; then
    . "$HXD/rep.$HCH"
  else
    HXD= _ho= _hx= _hr=125
  fi
}

# hxon → status 0 while the helper serves (a helper that is gone leaves the sh path)
hxon() {
  [ -n "$HXD" ] || return 1
  kill -0 "$HXPID" 2>/dev/null && return 0
  HXD=
  return 1
}

# run CMD ARGS… under the step deadline; output (stdout+stderr) in _out, status in _rc.
run() {
  if hxon; then
    case $1 in
      env) hx env ;;
      cat) hx cat "$2" ;;
      tail) case $2 in -c) hx tailc "$3" "$4" ;; *) hx tailn "$3" "$4" ;; esac ;;
      stat)
        shift 2
        hx stat "$@"
        ;;
      *) hx run "$@" ;;
    esac
    _out=$_ho _rc=$_hr
    return 0
  fi
  _out=$(deadline "$@" 2>&1 </dev/null)
  _rc=$?
}

# run_cap WHAT CAP CMD ARGS… — run(), keeping the first CAP bytes of the output: the rest is
# read (the command runs to its end, never cut by a SIGPIPE) and counted by wc, not kept, and a
# `cut` record says how much (a partial last line is dropped with it). The exit status comes
# back on fd 3, the kept bytes and the count on fd 4, so nothing interleaves.
run_cap() {
  _cw=$1 _cap=$2
  shift 2
  if hxon; then
    hx cap "$_cap" "$@"
    _out=$_ho _rc=$_hr _cut=$_hx
  else
    run_cap_sh "$@"
  fi
  cap_trim "$_cw" "$_cap"
}

# cap_trim WHAT CAP — (run_cap) _out cut at its last whole line and a `cut` record, when _cut
# says bytes were left out.
cap_trim() {
  [ "$_cut" -gt 0 ] 2>/dev/null || return 0
  case $_out in
    *"$NL") ;;
    *"$NL"*)
      _cp=${_out##*"$NL"}
      _out=${_out%"$NL"*}
      _cut=$((_cut + ${#_cp}))
      ;;
    *)
      _cut=$((_cut + ${#_out}))
      _out=
      ;;
  esac
  rec cut "$1" "$_cut" "$2"
}

run_cap_sh() {
  _out=$(
    {
      _st=$(
        {
          { deadline "$@" 2>&1 </dev/null; echo "$?" >&3; } |
            { head -c "$_cap"; printf '\n%s' "$(($(wc -c)))"; } >&4
        } 3>&1
      )
      printf '\n%s' "$_st"
    } 4>&1
  )
  _rc=${_out##*"$NL"}
  _out=${_out%"$NL"*}
  _cut=${_out##*"$NL"}
  _out=${_out%"$NL"*}
}

# run_pyfacts INDEX INTERPRETER — pyfacts.py on the interpreter's stdin; like run().
# With a third argument CID, the import-path part of that serving process's environment goes
# along as DT_PROC_* (the interpreter runs with -E; pyfacts applies them). With _drop set
# (drop_to), it runs as that serving process's owner. A fourth argument `pre`: the helper
# starts it now and keeps the answer for the same request later (py_prefetch); nothing else.
run_pyfacts() {
  _e=
  [ -n "${3:-}" ] && eval "_e=\$_pxr_$3"
  if [ "$_e" = 1 ]; then
    eval "_e1=\$_pxh_$3 _e2=\$_pxp_$3 _e3=\$_pxb_$3 _e4=\$_pxn_$3 _e5=\$_pxc_$3"
    eval "_e6=\$_pxf_$3 _e7=\$_pxz_$3"
  else
    _e= _e1= _e2= _e3= _e4= _e5= _e6= _e7=
  fi
  if hxon; then
    # shellcheck disable=SC2086 # $4: empty, or `pre` (py_prefetch: started now, taken later)
    hx ${4:-} pyfacts "$1" "$2" "$_dropu" "$_dropg" "DT_READ_FOR=${_readfor:-}" "DT_PROC=$_e" \
      "DT_PROC_HOME=$_e1" "DT_PROC_PYTHONPATH=$_e2" "DT_PROC_PYTHONUSERBASE=$_e3" \
      "DT_PROC_PYTHONNOUSERSITE=$_e4" "DT_PROC_CWD=$_e5" "DT_PROC_FLAGS=$_e6" "DT_PROC_PATH0=$_e7"
    _out=$_ho _rc=$_hr
    return 0
  fi
  [ -z "${4:-}" ] || return 0
  # exported in the command substitution's own subshell (no `env` process)
  # shellcheck disable=SC2086 # _drop: words of digits and options only
  _out=$(export DT_READ_FOR="${_readfor:-}" DT_PROC="$_e" DT_PROC_HOME="$_e1" DT_PROC_PYTHONPATH="$_e2" \
    DT_PROC_PYTHONUSERBASE="$_e3" DT_PROC_PYTHONNOUSERSITE="$_e4" DT_PROC_CWD="$_e5" \
    DT_PROC_FLAGS="$_e6" DT_PROC_PATH0="$_e7"
  with_pyfacts deadline $_drop "$2" -E -S - "$1" 2>&1)
  _rc=$?
}

# with_pyfacts CMD ARG… — CMD with pyfacts.py on its stdin (the interpreters; the host helper,
# which hands it to them)
with_pyfacts() {
  "$@" <<'DT_PYFACTS_EOF'
@DT_PYFACTS@
DT_PYFACTS_EOF
}

# emit_lines KIND ID TEXT — one record per non-empty line of TEXT.
emit_lines() {
  _ek=$1 _ei=$2 _eifs=$IFS
  IFS=$NL
  set -f
  for _ln in $3; do rec "$_ek" "$_ei" "$_ln"; done
  set +f
  IFS=$_eifs
}

# emit_file KIND ID PATH — one record per line of a (small) file, read with builtins.
emit_file() {
  [ -f "$3" ] && [ -r "$3" ] || return 1
  _n=0
  while IFS= read -r _ln || [ -n "$_ln" ]; do
    rec "$1" "$2" "$_ln"
    _n=$((_n + 1))
    [ "$_n" -ge 400 ] && break
  done <"$3"
  return 0
}

# resolve HOSTPATH — follow symlinks of the last component inside the root; result in _res.
resolve() {
  _res=$1 _hops=0
  while [ -L "$R$_res" ] && [ "$_hops" -lt 8 ]; do
    if hxon; then
      hx readlink "$R$_res"
      [ "$_hr" = 0 ] || break
      _t=$_ho
    else
      _t=$(deadline readlink "$R$_res") || break
    fi
    case $_t in
      /*) _res=$_t ;;
      *) _res=${_res%/*}/$_t ;;
    esac
    _hops=$((_hops + 1))
  done
}

# read_link PATH — the target of a symlink, in _rlk; status 1 when it cannot be read
read_link() {
  if hxon; then
    hx readlink "$1"
    _rlk=$_ho
    [ "$_hr" = 0 ]
    return
  fi
  _rlk=$(deadline readlink "$1" 2>/dev/null)
}

# nul_lines FILE — a /proc environ file with one variable a line, in _nul; status 1 when it
# cannot be read
nul_lines() {
  if hxon; then
    hx nul2nl "$1"
    _nul=$_ho
    [ "$_hr" = 0 ]
    return
  fi
  _nul=$(deadline tr '\0' '\n' 2>/dev/null <"$1")
}

is_exe() { [ -f "$R$1" ] && [ -x "$R$1" ]; }

# ---- the trust rule: nothing chosen by the inspected host runs with the probe's privileges --
# trusted HOSTPATH → status 0 when that program may run as the probing user: under a root
# prefix only with DT_TREE_EXEC=1 (a fake tree detective-tui built itself: its programs are
# stand-ins); on this host when the file, every directory above it and, for a symlink, its
# target and every directory above that are owned by root or the probing user (MYUID) and not
# writable by group or others (a sticky directory such as /tmp excepted; a symlink's own mode
# means nothing). One `readlink -f` and one `ls -ldn` per program, answers kept. The reason a
# program may not run is in _tw.
MYUID=
TRUSTC=
trusted() {
  _tw=
  if [ -n "$R" ]; then
    [ "${DT_TREE_EXEC:-}" = 1 ] && return 0
    _tw="a program of the root: tree (nothing from an inspected tree runs)"
    return 1
  fi
  case "$NL$TRUSTC" in *"$NL$1$TAB"*)
    _tw=${TRUSTC#*"$NL$1$TAB"}
    _tw=${_tw%%"$NL"*}
    [ -z "$_tw" ]
    return
    ;;
  esac
  trust_check "$1"
  TRUSTC="$TRUSTC$NL$1$TAB$_tw"
  [ -z "$_tw" ]
}

# trust_check HOSTPATH — the check behind trusted(); _tw empty when it passes.
trust_check() {
  _tw=
  case $1 in
    /*) ;;
    *)
      _tw="not an absolute path"
      return 0
      ;;
  esac
  case $1 in *"$NL"*)
    _tw="a newline in its path"
    return 0
    ;;
  esac
  case $MYUID in
    '' | *[!0-9]*)
      _tw="the probing user's uid is unknown"
      return 0
      ;;
  esac
  _tl= _tp=$1
  while [ -n "$_tp" ]; do
    _tl="$_tl$_tp$NL"
    _tp=${_tp%/*}
  done
  if hxon; then
    hx realpath "$1"
    _trp=$_ho
  else
    _trp=$(deadline readlink -f -- "$1" 2>/dev/null)
  fi
  if [ -n "$_trp" ] && [ "$_trp" != "$1" ]; then
    _tp=$_trp
    while [ -n "$_tp" ]; do
      _tl="$_tl$_tp$NL"
      _tp=${_tp%/*}
    done
  fi
  _tifs=$IFS
  IFS=$NL
  set -f
  # shellcheck disable=SC2086 # one operand a line
  if hxon; then
    hx lsldn / $_tl
    _tls=$_ho _trc=$_hr
  else
    _tls=$(deadline ls -ldn -- / $_tl 2>/dev/null)
    _trc=$?
  fi
  set +f
  IFS=$_tifs
  if [ "$_trc" != 0 ] || [ -z "$_tls" ]; then
    _tw="cannot list its owner and mode (ls -ldn failed)"
    return 0
  fi
  trust_lines
}

# trust_lines — the rule over the `ls -ldn` lines in _tls (the file, its link's target and the
# directories above each): _tw empty when each is owned by root or MYUID and, apart from a
# symlink and a sticky directory, not writable by group or others and without an ACL.
trust_lines() {
  _tw=
  while read -r _tm _tn _tu _tg _trest; do
    case $_tu in 0 | "$MYUID") ;; *)
      _tw="${_trest##* } is owned by uid $_tu, neither root nor the probing user ($MYUID)"
      return 0
      ;;
    esac
    case $_tm in
      l*) ;;
      *+*)
        _tw="${_trest##* } has an access control list"
        return 0
        ;;
      d????????[tT]*) ;;
      ?????w* | ????????w*)
        _tw="${_trest##* } is writable by group or others ($_tm)"
        return 0
        ;;
    esac
  done <<DT_TRUST_EOF
$_tls
DT_TRUST_EOF
}

# host_python — this machine's own python3 (not the tree's), when trusted: in _hostpy. It reads
# an inspected tree's interpreters' files (pyfacts.py with DT_READ_FOR).
host_python() {
  _hostpy=
  for _hp in /usr/bin/python3 /usr/local/bin/python3 /bin/python3; do
    [ -f "$_hp" ] && [ -x "$_hp" ] || continue
    _htw=$_tw
    trust_check "$_hp"
    _hok=$_tw
    _tw=$_htw
    if [ -z "$_hok" ]; then
      _hostpy=$_hp
      return 0
    fi
  done
  return 1
}

# drop_to UID GID — in _drop, the words that run a command as that user instead (the owner of
# the process that named it) when the probe runs as root: setpriv, else empty with _tw saying
# why. Not root: only the probing user's own processes (UID = MYUID) are run for, as is.
drop_to() {
  _drop= _dropu= _dropg=
  case $1$2 in '' | *[!0-9]*)
    _tw="$_tw; the owner of the process that named it is unknown"
    return 1
    ;;
  esac
  [ "$1" = "$MYUID" ] && return 0
  if [ "$MYUID" != 0 ]; then
    _tw="$_tw; the process that named it belongs to uid $1, not the probing user"
    return 1
  fi
  if ! command -v setpriv >/dev/null 2>&1; then
    _tw="$_tw; no setpriv to run it as the process's owner (uid $1)"
    return 1
  fi
  _drop="setpriv --reuid=$1 --regid=$2 --clear-groups --"
  _dropu=$1 _dropg=$2
}

# maybe_secret TEXT → status 0 when TEXT holds a word that could make a name secret (a quick
# test before is_secret, also for whole lines).
maybe_secret() {
  case $1 in
    *[Tt][Oo][Kk][Ee][Nn]* | *[Kk][Ee][Yy]* | *[Aa][Uu][Tt][Hh]* | *[Ss][Ee][Cc][Rr][Ee][Tt]* | \
      *[Pp][Aa][Ss][Ss]* | *[Pp][Ww][Dd]* | *[Pp][Aa][Tt]* | *[Cc][Rr][Ee][Dd][Ee][Nn][Tt]* | \
      *[Cc][Oo][Oo][Kk][Ii][Ee]*) return 0 ;;
  esac
  return 1
}

# camel_split NAME → NAME in _cs with "_" before each camelCase part (hfToken → hf_Token,
# HFToken → HF_Token), as tui/core/redact.py's _CAMEL; letters spelled out for any locale.
camel_split() {
  _cr=$1 _cs= _cq=
  while [ -n "$_cr" ]; do
    _cc=${_cr%"${_cr#?}"}
    _cr=${_cr#?}
    case $_cc in
      [ABCDEFGHIJKLMNOPQRSTUVWXYZ])
        case $_cq in
          [abcdefghijklmnopqrstuvwxyz0123456789]) _cs="${_cs}_" ;;
          [ABCDEFGHIJKLMNOPQRSTUVWXYZ])
            case $_cr in [abcdefghijklmnopqrstuvwxyz]*) _cs="${_cs}_" ;; esac ;;
        esac ;;
    esac
    _cs=$_cs$_cc _cq=$_cc
  done
}

# secret_word WORD → status 0 when WORD makes a name secret wherever it stands
secret_word() {
  case $1 in
    *[Tt][Oo][Kk][Ee][Nn] | *[Aa][Pp][Ii][Kk][Ee][Yy] | *[Aa][Uu][Tt][Hh] | \
      *[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn] | *[Ss][Ee][Cc][Rr][Ee][Tt]* | \
      *[Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]* | *[Pp][Aa][Ss][Ss][Ww][Dd]* | \
      *[Cc][Rr][Ee][Dd][Ee][Nn][Tt][Ii][Aa][Ll]* | *[Cc][Oo][Oo][Kk][Ii][Ee]* | \
      *[Pp][Rr][Ii][Vv][Aa][Tt][Ee][Kk][Ee][Yy]*) return 0 ;;
  esac
  return 1
}

# is_secret NAME → status 0 when a variable or --flag of that name holds a secret; word by word
# as tui/core/redact.py's is_secret_name: a word (whole, or one of its camelCase parts) ending
# in TOKEN, APIKEY, AUTH or AUTHORIZATION or holding SECRET, PASSWORD, PASSWD, CREDENTIAL,
# COOKIE, PRIVATEKEY; a last part KEY; PASS, PWD or PAT beside another part (HF_TOKEN, hfToken,
# --api-key, accountKey: yes; TOKENIZER, --max-total-tokens, keyType: no).
is_secret() {
  maybe_secret "$1" || return 1
  _sn=$1
  while :; do
    _sn=${_sn#"${_sn%%[A-Za-z0-9]*}"}
    _sw=${_sn%%[!A-Za-z0-9]*}
    [ -n "$_sw" ] || break
    _sn=${_sn#"$_sw"}
    secret_word "$_sw" && return 0
  done
  camel_split "$1"
  _sn=$_cs _slast= _snw=0 _scomp=
  while :; do
    _sn=${_sn#"${_sn%%[A-Za-z0-9]*}"}
    _sw=${_sn%%[!A-Za-z0-9]*}
    [ -n "$_sw" ] || break
    _sn=${_sn#"$_sw"}
    _snw=$((_snw + 1))
    secret_word "$_sw" && return 0
    case $_sw in [Pp][Aa][Ss][Ss] | [Pp][Ww][Dd] | [Pp][Aa][Tt]) _scomp=1 ;; esac
    _slast=$_sw
  done
  case $_slast in [Kk][Ee][Yy]) return 0 ;; esac
  [ -n "$_scomp" ] && [ "$_snw" -gt 1 ]
}

# looks_secret VALUE → status 0 when VALUE holds a credential shape (as tui/core/redact.py's
# TEXT_RULES: hf_, sk-, AKIA/ASIA, JWT, GitHub/GitLab/Slack/Google tokens, bearer or basic
# authorization, a private-key block; tests/test_probe_secrets.py holds the two to one list). Judged for values of names that may hold anything (VLLM_*, SGLANG_*, …).
looks_secret() {
  case $1 in
    hf_* | *[!A-Za-z0-9_]hf_* | sk-* | *[!A-Za-z0-9_-]sk-* | AKIA* | *[!A-Za-z0-9]AKIA* | \
      ASIA* | *[!A-Za-z0-9]ASIA* | eyJ*.* | *[!A-Za-z0-9]eyJ*.* | gh[opusr]_* | \
      *[!A-Za-z0-9]gh[opusr]_* | github_pat_* | *[!A-Za-z0-9]github_pat_* | glpat-* | \
      *[!A-Za-z0-9]glpat-* | xox[abprs]-* | *[!A-Za-z0-9]xox[abprs]-* | AIza* | \
      *[!A-Za-z0-9]AIza* | *[Bb][Ee][Aa][Rr][Ee][Rr][" $TAB"]* | \
      *[Bb][Aa][Ss][Ii][Cc][" $TAB"]* | *[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]:* | \
      *-----BEGIN*PRIVATE\ KEY-----* | nvapi-* | *[!A-Za-z0-9_-]nvapi-* | *AccountKey=* | \
      *[Aa][Cc][Cc][Oo][Uu][Nn][Tt][Kk][Ee][Yy]=* | *[Ss][Hh][Aa][Rr][Ee][Dd][Aa][Cc][Cc][Ee][Ss][Ss]* | \
      *[Kk][Ee][Yy]\"*:*) return 0 ;;
  esac
  return 1
}

# mask_value NAME VALUE — VALUE as the probe may send or store it, in _mv: *** for a secret
# name or a credential shape (not judged for paths), URL credentials masked.
mask_value() {
  _mv=$2
  if is_secret "$1"; then
    _mv='***'
    return 0
  fi
  case $1 in
    *PATH* | *HOME* | *_DIR | *PREFIX | PWD | USER | SHELL) ;;
    *) looks_secret "$2" && _mv='***' && return 0 ;;
  esac
  case $_mv in -* | *[" $TAB"]-*) mask_flags "$_mv" && _mv=$_mf ;; esac
  mask_url "$_mv" && _mv=$_mu
  case $_mv in *\"*:*) mask_json "$_mv" && _mv=$_jo ;; esac
  return 0
}

# mask_arg ARG — one argument of a serving process as the probe may send it, in _mg: URL
# credentials and the values of secret JSON keys masked, a credential shape (looks_secret)
# replaced by *** (after --flag=, the value only).
mask_arg() {
  _mg=$1
  mask_url "$_mg" && _mg=$_mu
  case $_mg in *\"*:*) mask_json "$_mg" && _mg=$_jo ;; esac
  if looks_secret "$_mg"; then
    case $_mg in --*=*) _mg="${_mg%%=*}=***" ;; *) _mg='***' ;; esac
  fi
  return 0
}

# mask_flags TEXT — the words of TEXT (a VLLM_*/SGLANG_* value holding arguments) with the value
# after a secret --flag, or of --flag=value, masked; in _mf (words joined by single spaces).
mask_flags() {
  _mf= _mfp= _mfifs=$IFS
  case $- in *f*) _mfg= ;; *) _mfg=1 ;; esac
  set -f
  IFS=" $TAB"
  for _mw in $1; do
    case $_mfp in
      --*=*) ;;
      -?*) case $_mw in -*) ;; *) is_secret "$_mfp" && _mw='***' ;; esac ;;
    esac
    case $_mw in --*=*) is_secret "${_mw%%=*}" && _mw="${_mw%%=*}=***" ;; esac
    _mf="$_mf${_mf:+ }$_mw"
    _mfp=$_mw
  done
  IFS=$_mfifs
  [ -n "$_mfg" ] && set +f
  return 0
}

# mask_json TEXT — TEXT with the string value of each secret "KEY": "value" pair masked
# ("hf_token": "***"); in _jo.
mask_json() {
  _jo= _jr=$1
  while :; do
    case $_jr in *\"*\"*:*) ;; *) break ;; esac
    _jo=$_jo${_jr%%\"*}\"
    _jr=${_jr#*\"}
    _jn=${_jr%%\"*}
    _jr=${_jr#*\"}
    _jo=$_jo$_jn\"
    case $_jr in *\"*) ;; *) continue ;; esac
    _js=${_jr%%\"*}
    case $_js in *:*) ;; *) continue ;; esac
    case $_js in *[!" $TAB:"]*) continue ;; esac
    is_secret "$_jn" || continue
    _jv=${_jr#*\"}
    case $_jv in *\"*) ;; *) continue ;; esac
    _jo="$_jo$_js\"***\""
    _jr=${_jv#*\"}
  done
  _jo=$_jo$_jr
  return 0
}

# redact_line TEXT — TEXT with the value of each secret NAME=value word masked, its quoting
# kept balanced ("NAME=a b" → "NAME=***", NAME='a b' → NAME='***'); in _rl.
# mask_token PREFIX CLASS MIN — in _mt (already set): its first PREFIX token at a word start,
# followed by at least MIN characters of CLASS, replaced by ***; the text around it kept.
mask_token() {
  case $_mt in *"$1"*) ;; *) return 0 ;; esac
  _tp=${_mt%%"$1"*}
  case $_tp in *[A-Za-z0-9_]) return 0 ;; esac
  _tb=${_mt#*"$1"}
  _tr=${_tb%%[!$2]*}
  [ "${#_tr}" -ge "$3" ] || return 0
  _mt="$_tp***${_tb#"$_tr"}"
}

# mask_tokens WORD — WORD in _mt with the bare tokens of tui/core/redact.py's TEXT_RULES masked
# (hf_, sk-, gh?_/github_pat_, glpat-, nvapi-, AKIA/ASIA, AIza, xox?-), as the client would.
mask_tokens() {
  _mt=$1
  case $_mt in *hf_* | *sk-* | *gh[opusr]_* | *github_pat_* | *glpat-* | *nvapi-* | *AKIA* | \
    *ASIA* | *AIza* | *xox[abprs]-*) ;; *) return 0 ;; esac
  mask_token hf_ A-Za-z0-9 20
  for _tk in sk- glpat- nvapi-; do mask_token "$_tk" A-Za-z0-9_- 20; done
  for _tk in ghp_ gho_ ghu_ ghs_ ghr_ github_pat_; do mask_token "$_tk" A-Za-z0-9_ 20; done
  for _tk in AKIA ASIA; do mask_token "$_tk" 0-9A-Z 16; done
  mask_token AIza 0-9A-Za-z_- 35
  for _tk in xoxa- xoxb- xoxp- xoxr- xoxs-; do mask_token "$_tk" A-Za-z0-9- 10; done
}

redact_line() {
  _rl=$1
  case $1 in *://*@*) ;; *) maybe_secret "$1" || looks_secret "$1" || return 0 ;; esac
  _rl= _rifs=$IFS _rq= _rb=
  IFS=" $TAB"
  set -f
  for _w in $1; do
    if [ -n "$_rq" ]; then # the rest of a masked quoted value, up to its closing quote
      case $_w in *"$_rq"*) _w=${_w#*"$_rq"} _rq= ;; *) continue ;; esac
      _rl=$_rl$_w
      continue
    fi
    if [ -n "$_rb" ] && [ "${#_w}" -ge 8 ]; then # the credential after Bearer / Basic
      case $_w in *[\"\']) _rl="$_rl ***${_w#"${_w%?}"}" ;; *) _rl="$_rl ***" ;; esac
      _rb=
      continue
    fi
    case $_w in [Bb][Ee][Aa][Rr][Ee][Rr] | [Bb][Aa][Ss][Ii][Cc]) _rb=1 ;; *) _rb= ;; esac
    _nm=${_w%%=*}
    if [ "$_nm" != "$_w" ]; then
      _q=
      case $_nm in \"* | \'*) _q=${_nm%"${_nm#?}"} _nm=${_nm#?} ;; esac
      _v=${_w#*=}
      mask_value "$_nm" "$_v"
      if [ "$_mv" = '***' ]; then
        if [ -z "$_q" ]; then
          case $_v in \"* | \'*) _q=${_v%"${_v#?}"} _v=${_v#?} ;; esac
        fi
        _tail=
        if [ -n "$_q" ]; then
          case $_v in *"$_q"*) _tail=${_v#*"$_q"} ;; *) _rq=$_q ;; esac
        fi
        case $_w in
          [\"\']*) _w="$_q$_nm=***$_q$_tail" ;;
          *) _w="$_nm=$_q***$_q$_tail" ;;
        esac
      elif [ "$_mv" != "$_v" ]; then
        _w=${_w%%=*}=$_mv
      fi
    else
      mask_tokens "$_w"
      _w=$_mt
    fi
    _rl="${_rl:+$_rl }$_w"
  done
  set +f
  IFS=$_rifs
}

# mask_url TEXT — status 0 and TEXT in _mu with the credentials of each scheme://user:pw@ or
# scheme://TOKEN@ masked (scheme://***@host); status 1 when TEXT holds none.
mask_url() {
  case $1 in *://*@*) ;; *) return 1 ;; esac
  _mu= _mr=$1
  while :; do
    case $_mr in *://*) ;; *) break ;; esac
    _mu=$_mu${_mr%%://*}://
    _mr=${_mr#*://}
    _ma=${_mr%%[/ ]*}
    case $_ma in *@*) _mu="$_mu***@" _mr=${_mr#"${_ma%@*}@"} ;; esac
  done
  _mu=$_mu$_mr
}

# ---- toolkit candidates: "source<TAB>home" lines, probed once per home at the end ----------
TKC=
TKRAN=
tk_add() { TKC="$TKC$1$TAB$2$NL"; }
home_of() {
  _h=${1%/*}
  _h=${_h%/*}
  [ -n "$_h" ] || _h=/
}

# which_nvcc CID SOURCE-SUFFIX PATHSTRING — `which -a nvcc` under PATHSTRING.
which_nvcc() {
  _wc=$1 _ws=$2 _wifs=$IFS _seen=: _hits=
  IFS=:
  set -f
  for _d in $3; do
    case $_d in /*) ;; *) continue ;; esac
    case $_seen in *":$_d:"*) continue ;; esac
    _seen="$_seen$_d:"
    is_exe "$_d/nvcc" && _hits="$_hits$_d/nvcc$NL"
  done
  set +f
  IFS=$NL
  for _p in $_hits; do
    rec which "$_wc" "$_p"
    home_of "$_p"
    tk_add "PATH$_ws" "$_h"
  done
  IFS=$_wifs
}

# scan_paths SOURCE TEXT — absolute paths named in an assignment line (unit/profile files):
# report which of them hold an executable nvcc (dir/nvcc) or are a toolkit home (dir/bin/nvcc).
scan_paths() {
  _sifs=$IFS
  IFS=":=\"' $TAB"
  set -f
  for _tok in $2; do
    case $_tok in //*) continue ;; /*) ;; *) continue ;; esac # //: a URL's authority, no path
    if is_exe "$_tok/nvcc"; then rec nvccdir "$_tok" 1; else rec nvccdir "$_tok" 0; fi
    [ -e "$R$_tok/bin/nvcc" ] && tk_add "$1" "$_tok"
  done
  set +f
  IFS=$_sifs
}

# ---- ptxas binaries: Triton's bundled ones and TRITON_PTXAS* overrides, run once each ------
PTXC=
ptxas_add() {
  case $1 in /*) ;; *) return 0 ;; esac
  case "$NL$PTXC" in *"$NL$1$NL"*) ;; *) PTXC="$PTXC$1$NL" ;; esac
}

# scan_ptxas TEXT — the value of each TRITON_PTXAS* assignment in a line (unit/profile files).
scan_ptxas() {
  case $1 in *TRITON_PTXAS*) ;; *) return 0 ;; esac
  _xifs=$IFS
  IFS="=\"' $TAB"
  set -f
  _xnext=
  for _tok in $1; do
    [ -n "$_xnext" ] && ptxas_add "$_tok"
    _xnext=
    case $_tok in TRITON_PTXAS*) _xnext=1 ;; esac
  done
  set +f
  IFS=$_xifs
}

# grep_release FILE [SECTION] — the release string inside a CUDA binary (nvcc, ptxas), in _out;
# with SECTION the helper reads only that ELF section (.rodata, at most 8 MB: hostread.py)
grep_release() {
  _gre='Cuda compilation tools, release [0-9][0-9.]*, V[0-9][0-9.]*'
  if hxon; then
    hx grepo "$_gre" "$1" 1 ${2:+"$2"}
    _out=$_ho
  else
    _out=$(
      export LC_ALL=C # bytes, whatever the login's locale: a binary is no text
      deadline grep -a -o -m 1 "$_gre" "$1" 2>/dev/null
    )
  fi
}

# is_elf64 FILE — status 0 when FILE (with the root prefix) is a 64-bit little-endian ELF file
is_elf64() {
  _eh=
  { IFS= read -r _eh <"$1"; } 2>/dev/null
  case $_eh in "$ELF64"*) return 0 ;; esac
  return 1
}

# elf_here FILE — status 0 when the ELF FILE is built for the machine the probe runs on (its
# e_machine against `uname -m`): another machine's binary cannot run here, so it takes the
# path it took before (run where trusted, and fail; else its files)
elf_here() {
  case ${HOSTARCH:-} in
    x86_64) _em='076 000' ;;
    aarch64) _em='267 000' ;;
    ppc64le) _em='025 000' ;;
    *) return 1 ;;
  esac
  if hxon; then
    hx od 20 "$1"
    _eo=$_ho
  else
    _eo=$(deadline od -A n -t o1 -v -N 20 <"$1" 2>/dev/null)
  fi
  _eifs=$IFS
  IFS=" $TAB$NL"
  # shellcheck disable=SC2086
  case $- in *f*) set -- $_eo ;; *) set -f && set -- $_eo && set +f ;; esac
  IFS=$_eifs
  [ "$#" -ge 20 ] && shift 18 && [ "$1 $2" = "$_em" ]
}

# nvcc_bin FILE — the release string `nvcc --version` (or `ptxas --version`) prints, read from FILE's .rodata when it
# is a 64-bit little-endian ELF nvcc (nothing runs), in _out; status 1 for anything else (a
# wrapper script, another ELF class) or no such string: then the nvcc runs where trusted
nvcc_bin() {
  _out=
  is_elf64 "$1" && elf_here "$1" || return 1
  grep_release "$1" .rodata
  [ -n "$_out" ]
}

probe_ptxas() {
  _xifs=$IFS
  IFS=$NL
  set -f
  for _px in $PTXC; do
    IFS=$_xifs
    if [ ! -f "$R$_px" ]; then
      rec ptxkv "$_px" exists 0
      IFS=$NL
      continue
    fi
    rec ptxkv "$_px" exists 1
    # a ptxas is NVIDIA's ELF binary (Triton bundles the nvcc wheel's): read, not run (nvcc_bin)
    if nvcc_bin "$R$_px"; then
      emit_lines ptxbin "$_px" "$_out"
      IFS=$NL
      continue
    fi
    if trusted "$_px"; then
      run "$R$_px" --version
      emit_lines ptxout "$_px" "$_out"
      rec ptxrc "$_px" "$_rc"
      case $_rc in 124 | 137) rec timeout "ptxas $_px" ;; esac
    else
      rec note trust "ptxas $_px not run ($_tw): its version read from the file"
    fi
    case $_out in
      *"release "[0-9]*) ;;
      *) # it cannot run here (another machine's binary, noexec): its version string
        grep_release "$R$_px"
        emit_lines ptxfile "$_px" "$_out"
        ;;
    esac
    IFS=$NL
  done
  set +f
  IFS=$_xifs
}

# ---- CUDA libraries: what LD_LIBRARY_PATH, ld.so.cache and a process's maps give -------
CUDA_LIB_RE='lib(cudart|nvrtc|nvrtc-builtins|cublas|cublasLt|cudnn|cudnn_[a-z_]+|nccl|nvJitLink)\.so[.0-9]*'

# ld_dirs CID DIRS — the CUDA libraries in each directory of a LD_LIBRARY_PATH value (and the
# unversioned libnvrtc.so, which code dlopens by that name; cuDNN 9's sub-libraries, which its
# frontend and libcudnn_graph open by name).
ld_dirs() {
  _lifs=$IFS
  IFS=:
  set -f
  for _ld in $2; do
    case $_ld in /*) ;; *) continue ;; esac
    set +f
    for _lf in "$R$_ld"/libcudart.so.[0-9]* "$R$_ld"/libnvrtc.so "$R$_ld"/libnvrtc.so.[0-9]* \
      "$R$_ld"/libcublas.so.[0-9]* "$R$_ld"/libcublasLt.so.[0-9]* "$R$_ld"/libcudnn.so.[0-9]* \
      "$R$_ld"/libcudnn_*.so.[0-9]* "$R$_ld"/libnccl.so.[0-9]* "$R$_ld"/libnvJitLink.so.[0-9]*; do
      [ -e "$_lf" ] || continue
      resolve "${_lf#"$R"}"
      rec ldlib "$1" "${_lf#"$R"}" "$_res"
    done
    set -f
  done
  set +f
  IFS=$_lifs
}

# scan_ld CID FILE TEXT — an assignment line of a unit, environment or profile file that sets
# LD_LIBRARY_PATH: the file is recorded, and (units and replayed profiles, whose value the
# builder computes) the libraries in the directories it names.
scan_ld() {
  case $3 in *LD_LIBRARY_PATH=*) ;; *) return 0 ;; esac
  rec ldsrc "$1" "$2"
  [ -n "${4:-}" ] || return 0
  _sv=${3#*LD_LIBRARY_PATH=}
  _sv=${_sv%%[\" $TAB]*}
  _sv=${_sv#[\"\']}
  ld_dirs "$1" "$_sv"
}

# ld_sources CID — profile files that set LD_LIBRARY_PATH (what a login shell reads).
ld_sources() {
  for _pf in "$R/etc/environment" "$R/etc/profile" "$R"/etc/profile.d/*.sh "$R$HOME/.profile" \
    "$R$HOME/.bash_profile" "$R$HOME/.bash_login" "$R$HOME/.bashrc" "$R$HOME/.zshenv" "$R$HOME/.zprofile" "$R$HOME/.zshrc"; do
    [ -f "$_pf" ] || continue
    while IFS= read -r _ln || [ -n "$_ln" ]; do
      case $_ln in
        *LD_LIBRARY_PATH=*)
          rec ldsrc "$1" "${_pf#"$R"}"
          break
          ;;
      esac
    done <"$_pf"
  done
}

# probe_ldcache — the CUDA libraries of ld.so.cache (`ldconfig -p`; under a root prefix, the
# tree's own ldconfig when it has one).
# ldcache_pick — the ldconfig that reads the cache: status 0 with _lc (and _lcc, the cache of an
# inspected tree, read by this machine's own ldconfig -C), 1 none, 2 one the trust rule refuses
ldcache_pick() {
  _lcc=
  for _lc in /sbin/ldconfig /usr/sbin/ldconfig /bin/ldconfig /usr/bin/ldconfig; do
    if [ -n "$R" ] && [ "${DT_TREE_EXEC:-}" != 1 ]; then
      # an inspected tree: its cache, read by this machine's own ldconfig (-C)
      [ -f "$R/etc/ld.so.cache" ] || return 1
      [ -f "$_lc" ] && [ -x "$_lc" ] || continue
      trust_check "$_lc"
      [ -z "$_tw" ] || continue
      _lcc=$R/etc/ld.so.cache
      return 0
    fi
    is_exe "$_lc" || continue
    trusted "$_lc" || return 2
    return 0
  done
  return 1
}

# ldcache_prefetch — with the helper, probe_ldcache's run started now (`hx pre`)
ldcache_prefetch() {
  hxon && ldcache_pick || return 0
  if [ -n "$_lcc" ]; then hx pre run "$_lc" -C "$_lcc" -p; else hx pre run "$R$_lc" -p; fi
}

probe_ldcache() {
  ldcache_pick
  case $? in
    1) return 0 ;;
    2)
      rec notrun ldconfig "$_lc: $_tw"
      return 0
      ;;
  esac
  if [ -n "$_lcc" ]; then run "$_lc" -C "$_lcc" -p; else run "$R$_lc" -p; fi
  case $_rc in 124 | 137) rec timeout ldconfig ;; esac
  _cifs=$IFS
  IFS=$NL
  set -f
  for _ln in $_out; do
    case $_ln in *libcudart.so* | *libnvrtc.so* | *libcublas* | *libcudnn.so* | *libcudnn_* | *libnccl.so* | *libnvJitLink.so*)
      case $_ln in *" => /"*) ;; *) continue ;; esac
      resolve "${_ln##* => }"
      rec ldcache "${_ln##* => }" "$_res"
      ;;
    esac
  done
  set +f
  IFS=$_cifs
}

# ---- contexts --------------------------------------------------------------------------
CID=0
PYS=
PYRAN=

# ctx_env CID BLOB — record the variables that matter from "NAME=value" lines; sets _c_*.
ctx_env() {
  _c_CUDA_HOME= _c_CUDA_PATH= _c_PATH= _c_HOME= _c_FIB= _c_CONDA=
  _c_PYTHONPATH= _c_PYTHONUSERBASE= _c_PYTHONNOUSERSITE=
  _cifs=$IFS
  IFS=$NL
  set -f
  for _kv in $2; do
    _k=${_kv%%=*}
    _v=${_kv#*=}
    [ "$_k" = "$_kv" ] && continue
    case $_k in
      CUDA_HOME) _c_CUDA_HOME=$_v ;;
      CUDA_PATH) _c_CUDA_PATH=$_v ;;
      PATH) _c_PATH=$_v ;;
      HOME) _c_HOME=$_v ;;
      FLASHINFER_WORKSPACE_BASE) _c_FIB=$_v ;;
      CONDA_PREFIX) _c_CONDA=$_v ;;
      PYTHONPATH) _c_PYTHONPATH=$_v ;;
      PYTHONUSERBASE) _c_PYTHONUSERBASE=$_v ;;
      PYTHONNOUSERSITE) _c_PYTHONNOUSERSITE=$_v ;;
    esac
    case $_k in
      CUDA_HOME | CUDA_PATH | PATH | LD_LIBRARY_PATH | FLASHINFER_* | TORCH_CUDA_ARCH_LIST | \
        CUDA_VISIBLE_DEVICES | CUDA_DEVICE_ORDER | NVIDIA_VISIBLE_DEVICES | VLLM_* | SGLANG_* | \
        HOME | USER | VIRTUAL_ENV | CONDA_PREFIX | TRITON_PTXAS* | PYTORCH_NVML_BASED_CUDA_CHECK | MAX_JOBS)
        mask_value "$_k" "$_v"
        rec env "$1" "$_k" "$_mv"
        ;;
    esac
    case $_k in TRITON_PTXAS*) ptxas_add "$_v" ;; LD_LIBRARY_PATH) ld_dirs "$1" "$_v" ;; esac
  done
  set +f
  IFS=$_cifs
}

# ctx_finish CID SUFFIX — which nvcc, toolkit candidates and JIT cache dirs of a context.
ctx_finish() {
  [ -n "$_c_CUDA_HOME" ] && tk_add "CUDA_HOME$2" "$_c_CUDA_HOME"
  [ -n "$_c_CUDA_PATH" ] && tk_add "CUDA_PATH$2" "$_c_CUDA_PATH"
  [ -n "$_c_CONDA" ] && [ -e "$R$_c_CONDA/bin/nvcc" ] && tk_add "conda:$_c_CONDA" "$_c_CONDA"
  which_nvcc "$1" "$2" "$_c_PATH"
  _base=${_c_FIB:-$_c_HOME}
  [ -n "$_base" ] || return 0
  _cache=$_base/.cache/flashinfer
  for _j in "$R$_cache"/*/ "$R$_cache"/*/*/; do
    [ -d "$_j" ] || continue
    _j=${_j%/}
    if [ "${_j%/*}" = "$R$_cache" ]; then
      case ${_j##*/} in [0-9]*) ;; *) continue ;; esac
      [ -d "$_j/cached_ops" ] || continue
    else
      case ${_j%/*} in */[0-9]*) ;; *) continue ;; esac
      case ${_j##*/} in cached_ops | generated | tmp | cubins) continue ;; esac
    fi
    rec jit "$1" "${_j#"$R"}"
    CHG_JIT="$CHG_JIT$_j$NL"
  done
}

ctx_ssh() {
  if [ "${DT_SESSION:-}" = current ]; then
    rec ctx 0 current "current shell"
  else
    rec ctx 0 ssh "ssh session"
  fi
  run env
  ctx_env 0 "$_out"
  ctx_finish 0 ""
  rec ctxkv 0 usr_local_cuda_exists "$ULC_EXISTS"
  ld_sources 0
}

ctx_login() {
  CID=$((CID + 1))
  # what a login starts: the passwd shell (unless it refuses logins), else $SHELL, else sh
  _sh=${LOGIN_SHELL:-${SHELL:-/bin/sh}}
  case ${_sh##*/} in nologin | false | "") _sh=${SHELL:-/bin/sh} ;; esac
  if [ -n "$R" ]; then
    rec ctx "$CID" login "login shell (profile files under the root)"
    rec ctxkv "$CID" replay 1
    for _pf in "$R/etc/environment" "$R/etc/profile" "$R"/etc/profile.d/*.sh "$R$HOME/.profile" \
      "$R$HOME/.bash_profile" "$R$HOME/.bash_login" "$R$HOME/.bashrc" "$R$HOME/.zshenv" "$R$HOME/.zprofile" "$R$HOME/.zshrc"; do
      [ -f "$_pf" ] || continue
      while IFS= read -r _ln || [ -n "$_ln" ]; do
        case $_ln in
          *=*)
            redact_line "$_ln"
            rec profile "$CID" "$_rl"
            case $_ln in *PATH* | *CUDA_HOME* | *CUDA_PATH*) scan_paths profile "$_rl" ;; esac
            scan_ptxas "$_ln"
            scan_ld "$CID" "${_pf#"$R"}" "$_ln" 1
            ;;
        esac
      done <"$_pf"
    done
    rec ctxkv "$CID" usr_local_cuda_exists "$ULC_EXISTS"
    return 0
  fi
  if ! trusted "$_sh"; then
    rec notrun "login shell" "$_sh: $_tw"
    return 0
  fi
  [ "$DETACH" = python ] && ! trusted "$DT_HOSTPY" && DETACH=
  case ${_sh##*/} in bash | zsh) _fl=-ilc ;; *) _fl=-lc ;; esac
  _flnote=
  if [ -z "$DETACH" ] && [ "$_fl" = -ilc ] && (: </dev/tty) 2>/dev/null; then
    # under a terminal an interactive shell outside its foreground group stops (SIGTTIN);
    # with no way to detach it, it runs as a plain login shell: its rc file is not read
    _fl=-lc
    _flnote="no setsid (or Python) to run it apart from the terminal: read as $_sh -lc, without its interactive rc file"
  fi
  LOGIN_CID=$CID
  rec ctx "$CID" login "login shell (${_sh##*/} $_fl)"
  rec ctxkv "$CID" usr_local_cuda_exists "$ULC_EXISTS"
  ld_sources "$CID"
  [ -n "$_flnote" ] && rec error "login shell" "$_flnote"
  # rc files can be slow (conda, pyenv): the shell runs in the background, read by finish_login.
  # An interactive shell rewrites its history file on exit: not ours to touch.
  HISTFILE=/dev/null
  export HISTFILE
  if [ -n "$BGDIR" ]; then
    login_job >"$BGDIR/login.out" 2>/dev/null &
    LOGIN_PID=$!
  else
    _out=$(login_job)
    login_env
  fi
}

# login_job — the login shell's environment, run in a session of its own (no controlling
# terminal: see DETACH) under the step deadline. Its output goes through login_filter in this
# pipe, so only the variables the probe reports, secrets masked, ever reach a file; its first
# line gives the new session's id (for the kill path: cleanup), its last its exit status.
login_job() {
  if hxon; then
    {
      HCH=2
      hx login "$_sh" "$_fl" "${BGDIR:+$BGDIR/login.pid}"
      printf '%s\n' "$_ho"
      echo "__DT_LOGIN_RC__ $_hr"
    } | login_filter
    return 0
  fi
  set -- "$_sh" "$_fl" 'echo __DT_LOGIN_ENV__; exec env'
  [ -n "$TO" ] && set -- "$TO" -k 2 "$T" "$@"
  case $DETACH in
    setsid) set -- setsid "$@" ;;
    python) set -- "$DT_HOSTPY" -E -S -c "$DETACH_PY" "$@" ;;
  esac
  {
    "$DT_SH" -c 'echo "__DT_LOGIN_PID__ $$"; exec "$@"' dt-login "$@" 2>&1 </dev/null
    echo "__DT_LOGIN_RC__ $?"
  } | login_filter
}

DETACH_PY='import os, sys
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])'

# login_filter — login_job's output, keeping the marker, the exit status and a superset of the
# variables ctx_env reports (values of secret names and URL credentials masked); rc-file noise
# and every other variable are dropped here.
login_filter() {
  _lfe=
  while IFS= read -r _ln; do
    case $_ln in
      "__DT_LOGIN_PID__ "*)
        [ -n "$BGDIR" ] && printf '%s\n' "${_ln#* }" >"$BGDIR/login.pid"
        continue
        ;;
      __DT_LOGIN_ENV__ | "__DT_LOGIN_RC__ "*)
        _lfe=1
        printf '%s\n' "$_ln"
        continue
        ;;
    esac
    [ -n "$_lfe" ] || continue
    _k=${_ln%%=*}
    [ "$_k" = "$_ln" ] && continue
    case $_k in
      CUDA_* | PATH | LD_LIBRARY_PATH | FLASHINFER_* | TORCH_* | NVIDIA_* | VLLM_* | SGLANG_* | \
        TRITON_* | PYTORCH_* | PYTHON* | HOME | USER | VIRTUAL_ENV | CONDA_* | MAX_JOBS) ;;
      *) continue ;;
    esac
    mask_value "$_k" "${_ln#*=}"
    printf '%s=%s\n' "$_k" "$_mv"
  done
}

finish_login() {
  [ -n "$LOGIN_PID" ] || return 0
  wait "$LOGIN_PID"
  LOGIN_PID=
  _out=
  { while IFS= read -r _ln; do _out="$_out$_ln$NL"; done <"$BGDIR/login.out"; } 2>/dev/null
  case $_out in
    *"__DT_LOGIN_RC__ "*) ;;
    *) # the temp file lost it (a full disk): once more, in the foreground
      rec note tmp "login shell output lost in $BGDIR; run again in the foreground"
      _out=$(login_job)
      ;;
  esac
  login_env
}

login_env() {
  _rc=${_out##*__DT_LOGIN_RC__ }
  _rc=${_rc%%[!0-9]*}
  if [ "$_rc" = 124 ] || [ "$_rc" = 137 ]; then
    rec timeout "login shell"
  fi
  case $_out in
    *__DT_LOGIN_ENV__*)
      ctx_env "$LOGIN_CID" "${_out#*__DT_LOGIN_ENV__"$NL"}"
      ctx_finish "$LOGIN_CID" "@login shell"
      ;;
    *) rec error "login shell" "no environment from $_sh $_fl (exit ${_rc:-unknown})" ;;
  esac
}

# unit_ctx CID UNIT — Environment=/EnvironmentFile= of a systemd unit and its drop-ins.
unit_env_file() {
  _uf=$1
  [ -f "$R$_uf" ] || return 0
  while IFS= read -r _ul || [ -n "$_ul" ]; do
    case $_ul in
      Environment=*)
        redact_line "${_ul#Environment=}"
        rec unitenv "$2" "$_rl"
        scan_paths "unit $3" "$_rl"
        scan_ptxas "${_ul#Environment=}"
        scan_ld "$2" "$_uf" "$_ul" 1
        ;;
      EnvironmentFile=*)
        _ef=${_ul#EnvironmentFile=}
        rec unitenvpath "$2" "$_ef"
        _ef=${_ef#-}
        if [ -f "$R$_ef" ]; then
          while IFS= read -r _el || [ -n "$_el" ]; do
            redact_line "$_el"
            rec unitenvfile "$2" "$_rl"
            scan_paths "unit $3" "$_rl"
            scan_ptxas "$_el"
            scan_ld "$2" "$_ef" "$_el" 1
          done <"$R$_ef"
        fi
        ;;
    esac
  done <"$R$_uf"
}

unit_ctx() {
  CID=$((CID + 1))
  set -- "$CID" "$1"
  rec ctx "$CID" unit "unit $2"
  rec ctxkv "$CID" unit "$2"
  rec ctxkv "$CID" usr_local_cuda_exists "$ULC_EXISTS"
  _udirs="/etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system /lib/systemd/system /usr/lib/systemd/system"
  for _ud in $_udirs; do
    if [ -f "$R$_ud/$2" ]; then
      rec ctxkv "$CID" unit_file "$_ud/$2"
      unit_env_file "$_ud/$2" "$CID" "$2"
      break
    fi
  done
  for _ud in /usr/lib/systemd/system /lib/systemd/system /usr/local/lib/systemd/system /run/systemd/system /etc/systemd/system; do
    for _dropin in "$R$_ud/$2.d"/*.conf; do
      [ -f "$_dropin" ] || continue
      rec ctxkv "$CID" unit_file "${_dropin#"$R"}"
      unit_env_file "${_dropin#"$R"}" "$CID" "$2"
    done
  done
  for _dd in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
    if is_exe "$_dd/nvcc"; then rec nvccdir "$_dd" 1; else rec nvccdir "$_dd" 0; fi
  done
}

# read_argv PROCDIR — the arguments in PROCDIR/cmdline, exactly: one per line in _argv, each
# escaped (`\\` a backslash, `\ooo` a byte below 0x20, 0x7f or above 0x7f — so a line holds
# printable ASCII only), their number in _argc; _argfull is empty when the command line is
# longer than ARGV_MAX bytes (_argv then holds its start). od lists the bytes in octal; the
# loop turns them into a printf format, a line at a time (a string grown byte by byte costs
# quadratic time in sh), and one printf writes every argument.
ARGV_MAX=65536
read_argv() {
  if hxon; then
    hx od $((ARGV_MAX + 1)) "$1/cmdline"
    [ "$_hr" = 0 ] || return 1
    _oct=$_ho
  else
    _oct=$(deadline od -A n -t o1 -v -N $((ARGV_MAX + 1)) <"$1/cmdline" 2>/dev/null) || return 1
  fi
  _fmt= _blk= _nl=0 _nb=0 _argc=0 _open= _argfull=1 _rifs=$IFS
  set -f
  IFS=$NL
  for _ol in $_oct; do
    _lf=
    IFS=" $TAB"
    for _b in $_ol; do
      _nb=$((_nb + 1))
      case $_b in
        000) _lf="$_lf\\n" _open= _argc=$((_argc + 1)) ;;
        134) _lf="$_lf\\\\\\\\" _open=1 ;;
        0[0-3]? | 177 | [23]??) _lf="$_lf\\\\$_b" _open=1 ;;
        *) _lf="$_lf\\$_b" _open=1 ;;
      esac
    done
    _blk=$_blk$_lf
    _nl=$((_nl + 1))
    if [ "$_nl" -ge 64 ]; then _fmt=$_fmt$_blk _blk= _nl=0; fi
  done
  set +f
  IFS=$_rifs
  _fmt=$_fmt$_blk
  if [ -n "$_open" ]; then _fmt="$_fmt\\n" _argc=$((_argc + 1)); fi
  if [ "$_nb" -gt "$ARGV_MAX" ]; then _argfull=; fi
  _argv=$(printf "${_fmt}x")
  _argv=${_argv%x}
}

# unesc TEXT — the bytes an escaped argument stands for (printf reads its escapes); in _raw.
unesc() {
  _raw=$1
  case $1 in *\\*) ;; *) return 0 ;; esac
  _uf= _ur=$1
  while :; do
    case $_ur in
      *%*) _uf="$_uf${_ur%%[%]*}%%" _ur=${_ur#*%} ;;
      *) break ;;
    esac
  done
  _raw=$(printf "x$_uf${_ur}x")
  _raw=${_raw#x}
  _raw=${_raw%x}
}

# py_start — how the interpreter was started, from its options in _argv (see proc_ctx): the
# flags that change its import path (I E s S P) in _pflags; what makes its sys.path[0] in _p0:
# "cwd" (-m, -c, stdin), "script:PATH", or empty.
py_start() {
  _pflags= _p0= _pn=0 _pskip=
  while IFS= read -r _a; do
    _pn=$((_pn + 1))
    [ "$_pn" -eq 1 ] && continue
    [ "$_pn" -gt "$_argc" ] && break
    if [ -n "$_pskip" ]; then
      _pskip=
      continue
    fi
    case $_a in
      - | -m* | -c*)
        _p0=cwd
        return 0
        ;;
      --*) ;;
      -?*)
        _g=${_a#-}
        while [ -n "$_g" ]; do
          _ch=${_g%"${_g#?}"}
          _g=${_g#?}
          case $_ch in
            m | c)
              _p0=cwd
              return 0
              ;;
            W | X)
              [ -z "$_g" ] && _pskip=1
              _g=
              ;;
            *) _pflags=$_pflags$_ch ;;
          esac
        done
        ;;
      *)
        unesc "$_a"
        _p0=script:$_raw
        return 0
        ;;
    esac
  done <<DT_ARGV_EOF
$_argv
DT_ARGV_EOF
}

# proc_ctx PID — a serving process: its arguments, interpreter, environment and systemd unit.
# The `arg` records are kept in _recs until the command line shows a serving process.
UNITS=
BARE_PIDS=
CONTAINERS= # "ENGINE ID" lines: the containers serving processes run in (their cgroup says)
# The cgroup path shapes (from /proc/PID/cgroup captures in public threads): docker-ID.scope and
# /docker/ID (moby/moby#33352), libpod-ID.scope; Kubernetes' CRI runtimes, read with crictl:
# .../kubepods-burstable-podUID.slice/cri-containerd-ID.scope (netdata/netdata#4868),
# crio-ID.scope (opencontainers/runc#4620), cgroup v1's kubepods-…slice:cri-containerd:ID
# (open-telemetry/opentelemetry-java#4507) and the cgroupfs driver's
# /kubepods/burstable/podUID/ID (google/cadvisor#2540).
# ctr_id ENGINE ID.scope — _ctr="ENGINE ID" when ID is a container id (64 hex digits)
ctr_id() {
  _ctid=${2%.scope}
  case $_ctid in *[!0-9a-f]* | "") return 0 ;; esac
  if [ "${#_ctid}" -eq 64 ]; then _ctr="$1 $_ctid"; fi
}
proc_ctx() {
  _pd=$R/proc/$1
  read_argv "$_pd" || return 0
  [ "$_argc" -gt 0 ] || return 0
  _pcid=$((CID + 1))
  _argv0= _prog= _prev= _cmd= _recs= _n=0
  while IFS= read -r _a; do
    _n=$((_n + 1))
    [ "$_n" -gt "$_argc" ] && break
    if [ "$_n" -gt 1 ]; then
      # --api-key VALUE, --hf-token=VALUE …: the value never leaves the host
      case $_prev in
        --*=*) ;;
        --*) case $_a in -*) ;; *) is_secret "$_prev" && _a='***' ;; esac ;;
      esac
      case $_a in --*=*) is_secret "${_a%%=*}" && _a="${_a%%=*}=***" ;; esac
      case $_a in '***' | *=\*\*\*) ;; *) mask_arg "$_a" && _a=$_mg ;; esac
      _cmd="$_cmd $_a"
      if [ -z "$_prog" ]; then
        if [ "$_prev" = -m ]; then _prog=$_a; fi
        case $_a in -*) ;; *) [ "$_prev" = -m ] || _prog=${_a##*/} ;; esac
      fi
      _prev=$_a
    else
      _argv0=$_a _cmd=$_a
    fi
    # already escaped by read_argv (its \\ and \ooo are esc's): only a sentinel to break
    _l=$_a
    while :; do
      case $_l in *@@DT1*) ;; *) break ;; esac
      _l="${_l%%@@DT1*}@@\\104T1${_l#*@@DT1}"
    done
    _recs="$_recs@@DT1${TAB}arg$TAB$_pcid$TAB$_l$NL"
  done <<DT_ARGV_EOF
$_argv
DT_ARGV_EOF
  unesc "$_argv0"
  _argv0=$_raw
  _exe=
  [ -L "$_pd/exe" ] && read_link "$_pd/exe" && _exe=$_rlk
  _exe=${_exe% (deleted)}
  case ${_exe##*/} in python*) ;; *) case ${_argv0##*/} in python*) ;; *) return 0 ;; esac ;; esac
  case $_cmd in
    *sglang* | *vllm* | *" serve" | *" serve "* | *.serve | *".serve "* | *_server* | *serve.py*) ;;
    *) return 0 ;;
  esac
  CID=$_pcid
  rec ctx "$_pcid" process "pid $1 ${_prog:-${_argv0##*/}}"
  rec ctxkv "$_pcid" pid "$1"
  CHG_PIDS="$CHG_PIDS $1"
  # its owner (effective uid and gid): whom a program it names may run as (drop_to)
  _pu= _pg=
  { while IFS= read -r _sl; do
    case $_sl in
      Uid:* | Gid:*) # real, effective, saved, fs: the second
        _x=${_sl#*:}
        _x=${_x#"${_x%%[0-9]*}"}
        _x=${_x#*[!0-9]}
        _x=${_x#"${_x%%[0-9]*}"}
        case $_sl in Uid:*) _pu=${_x%%[!0-9]*} ;; *) _pg=${_x%%[!0-9]*} ;; esac
        ;;
    esac
  done <"$_pd/status"; } 2>/dev/null
  eval "_pxu_$_pcid=\$_pu _pxg_$_pcid=\$_pg"
  rec ctxkv "$_pcid" exe "$_exe"
  if [ -n "$_argfull" ]; then
    printf '%s' "$_recs"
    rec ctxkv "$_pcid" argc "$_argc"
  else
    rec ctxkv "$_pcid" argv_over "$ARGV_MAX"
  fi
  rec ctxkv "$_pcid" cmdline "$_cmd"
  rec ctxkv "$_pcid" usr_local_cuda_exists "$ULC_EXISTS"
  _unit= _ctr=
  if [ -r "$_pd/cgroup" ]; then
    while IFS= read -r _cg || [ -n "$_cg" ]; do
      _cgp=${_cg#*:}
      _cgp=${_cgp#*:}
      _gifs=$IFS
      IFS=/
      set -f
      _cgprev= _cgkube=
      for _part in $_cgp; do
        case $_part in
          user@*.service) ;;
          *.service) _unit=$_part ;;
          docker-*.scope) ctr_id docker "${_part#docker-}" ;;
          libpod-conmon-*) ;;
          libpod-*.scope) ctr_id podman "${_part#libpod-}" ;;
          cri-containerd-*.scope) ctr_id crictl "${_part#cri-containerd-}" ;;
          crio-conmon-*) ;;
          crio-*.scope) ctr_id crictl "${_part#crio-}" ;;
          *:cri-containerd:*) ctr_id crictl "${_part##*:cri-containerd:}" ;;
          kubepods) _cgkube=1 ;;
          *)
            if [ "$_cgprev" = docker ]; then # cgroupfs: /docker/ID
              ctr_id docker "$_part"
            elif [ -n "$_cgkube" ]; then # cgroupfs: /kubepods[/QOS]/podUID/ID
              case $_cgprev in pod*) ctr_id crictl "$_part" ;; esac
            fi
            ;;
        esac
        _cgprev=$_part
      done
      set +f
      IFS=$_gifs
    done <"$_pd/cgroup"
  fi
  # a container under the runtime's own unit (cgroup v1's containerd.service/…:cri-containerd:ID)
  # is not that unit's process; one a unit of its own started (podman under a unit) keeps it
  if [ -n "$_ctr" ]; then
    case $_unit in containerd.service | docker.service | crio.service) _unit= ;; esac
  fi
  [ -n "$_unit" ] && rec ctxkv "$_pcid" unit "$_unit"
  if [ -n "$_ctr" ]; then
    rec ctxkv "$_pcid" container "$_ctr"
    case "$NL$CONTAINERS" in *"$NL$_ctr$NL"*) ;; *) CONTAINERS="$CONTAINERS$_ctr$NL" ;; esac
  fi
  _penv=
  if [ -r "$_pd/environ" ] && nul_lines "$_pd/environ"; then
    _penv=$_nul
    rec ctxkv "$_pcid" environ_readable 1
  else
    _penv=
    rec ctxkv "$_pcid" environ_readable 0
  fi
  ctx_env "$_pcid" "$_penv"
  if [ -r "$_pd/maps" ]; then
    if hxon; then
      hx grepo "/[^ ]*/$CUDA_LIB_RE" "$_pd/maps"
      _maps=$_ho
    else
      _maps=$(deadline grep -o -E "/[^ ]*/$CUDA_LIB_RE" "$_pd/maps" 2>/dev/null)
    fi
    _mseen=$NL
    _mifs=$IFS
    IFS=$NL
    set -f
    for _ml in $_maps; do
      case $_mseen in *"$NL$_ml$NL"*) continue ;; esac
      _mseen="$_mseen$_ml$NL"
      rec maplib "$_pcid" "$_ml"
    done
    set +f
    IFS=$_mifs
  fi
  _ppath=$_c_PATH
  ctx_finish "$_pcid" "@pid $1"
  _pcwd=
  [ -L "$_pd/cwd" ] && read_link "$_pd/cwd" && _pcwd=$_rlk
  _pcwd=${_pcwd% (deleted)}
  # what of its start and environment changes the interpreter's import path (for run_pyfacts)
  py_start
  case $_p0 in
    cwd) _p0=$_pcwd ;;
    script:/*) _p0=${_p0#script:} _p0=${_p0%/*} ;;
    script:*/*) _p0=${_p0#script:} _p0=$_pcwd/${_p0%/*} ;;
    script:*) _p0=$_pcwd ;;
  esac
  case $_p0 in /*) ;; *) _p0= ;; esac
  if [ -n "$_penv" ]; then
    eval "_pxr_$_pcid=1 _pxh_$_pcid=\$_c_HOME _pxp_$_pcid=\$_c_PYTHONPATH _pxc_$_pcid=\$_pcwd"
    eval "_pxb_$_pcid=\$_c_PYTHONUSERBASE _pxn_$_pcid=\$_c_PYTHONNOUSERSITE"
    eval "_pxf_$_pcid=\$_pflags _pxz_$_pcid=\$_p0"
  fi
  # the interpreter: argv[0] when it names one, else looked up on the process PATH, else exe
  _py=
  case $_argv0 in
    /*) is_exe "$_argv0" && _py=$_argv0 ;;
    */*) # relative (.venv/bin/python): from the process's working directory
      _rel=${_argv0#./}
      case $_pcwd in /*) is_exe "${_pcwd%/}/$_rel" && _py=${_pcwd%/}/$_rel ;; esac
      ;;
    ?*)
      _aifs=$IFS
      IFS=:
      set -f
      for _d in $_ppath; do
        case $_d in /*) ;; *) continue ;; esac
        if [ -z "$_py" ] && is_exe "$_d/$_argv0"; then _py=$_d/$_argv0; fi
      done
      set +f
      IFS=$_aifs
      ;;
  esac
  [ -n "$_py" ] || _py=$_exe
  [ -n "$_py" ] && PYS="$PYS$_py${TAB}process$TAB$_pcid$TAB${_prog:-}$NL"
  if [ -n "$_unit" ]; then
    case "$NL$UNITS" in *"$NL$_unit$NL"*) ;; *) UNITS="$UNITS$_unit$NL" ;; esac
  else
    BARE_PIDS="$BARE_PIDS $1"
  fi
}

discover_processes() {
  command -v grep >/dev/null 2>&1 || return 0
  if hxon; then
    hx grepl 'sglang|vllm|serve' "$R"/proc/[0-9]*/cmdline
    _found=$_ho
  else
    _found=$(deadline grep -l -a -E 'sglang|vllm|serve' "$R"/proc/[0-9]*/cmdline 2>/dev/null)
  fi
  _pids=
  _uifs=$IFS
  IFS=$NL
  set -f
  for _cf in $_found; do
    _p=${_cf%/cmdline}
    _p=${_p##*/}
    [ "$_p" = "$$" ] && continue
    _pids="$_pids $_p"
  done
  set +f
  IFS=$_uifs
  for _p in $_pids; do
    # workers of a server (sglang::scheduler_TP0, VLLM::Worker…) share its environment: skip
    # a process whose parent is itself a match
    _ppid=
    { while IFS= read -r _sl; do
      case $_sl in PPid:*)
        _ppid=${_sl#PPid:}
        _ppid=${_ppid#"${_ppid%%[0-9]*}"}
        break
        ;;
      esac
    done <"$R/proc/$_p/status"; } 2>/dev/null
    case " $_pids " in *" $_ppid "*) continue ;; esac
    proc_ctx "$_p"
  done
  IFS=$NL
  for _u in $UNITS; do
    IFS=$_uifs
    unit_ctx "$_u"
  done
  IFS=$_uifs
}

# login_shell UID — the account's login shell from the passwd database (the root's own
# /etc/passwd first when inspecting a root), in LOGIN_SHELL; empty when unknown. $SHELL is only
# the fallback: a local run inherits whatever the caller had (cron and CI often have none).
LOGIN_SHELL=
login_shell() {
  _pw=
  case $1 in '' | *[!0-9]*) return 0 ;; esac
  if [ -n "$R" ] && [ -r "$R/etc/passwd" ]; then
    if hxon; then
      hx greplines "^[^:]*:[^:]*:$1:" "$R/etc/passwd" 1
      _pw=$_ho
    else
      _pw=$(grep "^[^:]*:[^:]*:$1:" "$R/etc/passwd" | head -n 1)
    fi
  fi
  if [ -z "$_pw" ] && command -v getent >/dev/null 2>&1; then
    if hxon; then
      hx passwd "$1"
      _pw=$_ho
    else
      _pw=$(deadline getent passwd "$1" 2>/dev/null | head -n 1)
    fi
  fi
  case $_pw in *:*) LOGIN_SHELL=${_pw##*:} ;; esac
}

# ---- steps -----------------------------------------------------------------------------
probe_host() {
  if [ -r "$R/proc/sys/kernel/hostname" ]; then
    read -r _hn <"$R/proc/sys/kernel/hostname"
  elif [ -r "$R/etc/hostname" ]; then
    read -r _hn <"$R/etc/hostname"
  else
    if hxon; then
      hx uname n
      _hn=$_ho
    else
      _hn=$(deadline uname -n)
    fi
  fi
  rec host hostname "$_hn"
  if hxon; then
    hx uname rm
    _un=$_ho
  else
    _un=$(deadline uname -r -m)
  fi
  _kr=${_un% *}
  [ -r "$R/proc/sys/kernel/osrelease" ] && read -r _kr <"$R/proc/sys/kernel/osrelease"
  rec host kernel "$_kr"
  rec host arch "${_un##* }"
  HOSTARCH=${_un##* }
  if hxon; then
    hx id
    _id=$_ho
  else
    _id=$(deadline id 2>/dev/null)
  fi
  _uid=${_id#uid=}
  _uid=${_uid%%(*}
  _user=${_id#*(}
  _user=${_user%%)*}
  rec host uid "$_uid"
  MYUID=$_uid
  rec host user "${_user:-${USER:-}}"
  login_shell "$_uid"
  rec host shell "${LOGIN_SHELL:-${SHELL:-}}"
  if [ "$_uid" != 0 ] && command -v sudo >/dev/null 2>&1; then
    run sudo -n true
    if [ "$_rc" = 0 ]; then rec host sudo yes; else rec host sudo no; fi
  fi
  for _sp in /usr/bin/python3 /usr/local/bin/python3 /bin/python3; do
    if is_exe "$_sp"; then rec host python3 "$_sp"; break; fi
  done
  emit_file osr - "$R/etc/os-release" || emit_file osr - "$R/usr/lib/os-release"
  ULC_EXISTS=0
  [ -e "$R/usr/local/cuda" ] && ULC_EXISTS=1
  if [ -e "$R/usr/local/cuda" ] || [ -L "$R/usr/local/cuda" ]; then
    resolve /usr/local/cuda
    rec ulc "$ULC_EXISTS" "$_res"
  fi
}

ctr_marker() {
  _inctr=1
  rec ctr marker "$1"
}

# container markers, NVIDIA device nodes and driver libraries a GPU runtime injects
probe_container() {
  _inctr=
  [ -e "$R/.dockerenv" ] && ctr_marker /.dockerenv
  [ -e "$R/run/.containerenv" ] && ctr_marker /run/.containerenv
  [ -d "$R/var/run/secrets/kubernetes.io/serviceaccount" ] && ctr_marker kubernetes
  [ -z "$R" ] && [ -n "${KUBERNETES_SERVICE_HOST:-}" ] && ctr_marker KUBERNETES_SERVICE_HOST
  if [ -r "$R/proc/1/cgroup" ]; then
    while IFS= read -r _cg || [ -n "$_cg" ]; do
      case $_cg in *docker* | *kubepods* | *containerd* | *libpod* | *lxc*)
        ctr_marker "cgroup $_cg"
        break
        ;;
      esac
    done <"$R/proc/1/cgroup"
  fi
  for _dv in "$R"/dev/nvidia*; do [ -e "$_dv" ] && rec ctr dev "${_dv#"$R"}"; done
  for _ld in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /lib64 \
    /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/wsl/lib; do
    for _lc in "$R$_ld"/libcuda.so.1 "$R$_ld"/libnvidia-ml.so.1; do
      [ -e "$_lc" ] && rec ctr lib "${_lc#"$R"}"
    done
  done
  # inside one, the GPUs the runtime was asked for: PID 1's NVIDIA_VISIBLE_DEVICES (as the
  # container was started) and the device plugin's volume-mounts list (a file per device)
  if [ -n "$_inctr" ]; then
    _cenv=
    [ -r "$R/proc/1/environ" ] && nul_lines "$R/proc/1/environ" && _cenv=$_nul
    _cifs=$IFS
    IFS=$NL
    set -f
    for _cv in $_cenv; do
      case $_cv in NVIDIA_VISIBLE_DEVICES=* | NVIDIA_DRIVER_CAPABILITIES=* | CUDA_VISIBLE_DEVICES=*)
        rec ctr env "$_cv"
        ;;
      esac
    done
    set +f
    IFS=$_cifs
    _cdv="$R/var/run/nvidia-container-devices"
    for _cd in "$_cdv"/* "$_cdv"/cdi/*/*/*; do
      if [ -f "$_cd" ] || [ -c "$_cd" ]; then rec ctr alloc "${_cd#"$_cdv"/}"; fi
    done
  fi
}

# the dynamic loader's configuration and the libcuda.so.<version> files in CUDA compat dirs,
# the dirs it names and the session's LD_LIBRARY_PATH (forward-compatibility libraries)
probe_libcuda() {
  _dirs=
  for _lf in "$R/etc/ld.so.conf" "$R"/etc/ld.so.conf.d/*.conf; do
    [ -f "$_lf" ] || continue
    while IFS= read -r _ll || [ -n "$_ll" ]; do
      case $_ll in '' | '#'* | include*) continue ;; esac
      rec ldconf "${_lf#"$R"}" "$_ll"
      case $_ll in /*) _dirs="$_dirs$_ll$NL" ;; esac
    done <"$_lf"
  done
  _lifs=$IFS
  IFS=:
  for _ld in ${LD_LIBRARY_PATH:-}; do
    case $_ld in /*) _dirs="$_dirs$_ld$NL" ;; esac
  done
  IFS=$_lifs
  for _cd in "$R"/usr/local/cuda*/compat "$R"/usr/local/cuda*/compat/lib*; do
    [ -d "$_cd" ] && _dirs="$_dirs${_cd#"$R"}$NL"
  done
  _seen=
  IFS=$NL
  for _ld in $_dirs; do
    case "$NL$_seen" in *"$NL$_ld$NL"*) continue ;; esac
    _seen="$_seen$_ld$NL"
    IFS=$_lifs
    for _lc in "$R$_ld"/libcuda.so.*; do
      case ${_lc##*/} in libcuda.so.1) continue ;; esac
      [ -f "$_lc" ] && rec libcuda "${_lc#"$R"}"
    done
    IFS=$NL
  done
  IFS=$_lifs
}

# ---- temp files and detaching ---------------------------------------------------------
# The background steps (nvidia-smi, the login shell) write to a directory of our own: the first
# of $TMPDIR, /tmp, /var/tmp, /dev/shm, $HOME that really holds data (a full filesystem still
# creates directories, so a line is written and read back). With none they run one after the
# other in the foreground, through pipes only. Directories left by probes that were killed
# (named after their pid, which is gone) are removed on the way, but only those whose `probe`
# file names this PID namespace: a probe running in another namespace (a container sharing
# /tmp) has a pid this one cannot see. The directory is announced to the client
# (@@detective-tui-tmpdir), whose kill path removes it too.
BGDIR=
pick_tmpdir() {
  command -v mktemp >/dev/null 2>&1 || return 0
  _ns=$(deadline readlink "/proc/$$/ns/pid" 2>/dev/null) || _ns=
  _tag="detective-tui${_ns:+ $_ns}"
  _tseen=:
  for _tb in "${TMPDIR:-}" /tmp /var/tmp /dev/shm "${HOME:-}"; do
    _tb=${_tb%/}
    case $_tb in /?*) ;; *) continue ;; esac
    case $_tseen in *":$_tb:"*) continue ;; esac
    _tseen="$_tseen$_tb:"
    [ -d "$_tb" ] && [ -w "$_tb" ] || continue
    sweep_tmp "$_tb"
    if ! _td=$(mktemp -d "$_tb/detective-tui.$$.XXXXXX" 2>/dev/null); then
      rec note tmp "$_tb cannot hold data (full?)"
      continue
    fi
    _tl=
    { echo "$_tag" >"$_td/probe" && read -r _tl <"$_td/probe"; } 2>/dev/null
    if [ "$_tl" = "$_tag" ]; then
      BGDIR=$_td
      printf '@@detective-tui-tmpdir %s\n' "$BGDIR"
      return 0
    fi
    rm -rf "$_td"
    rec note tmp "$_tb cannot hold data (full?)"
  done
  rec note tmp "no temp dir that holds data: the background steps run one after the other"
}

# boot_trust PYTHON — trust_check for the helper's own python3 with one `ls -ldn` (under the
# deadline: 2 processes, not 4): `/`, the directories above it, the file and the python3.*
# files beside it, so the usual `python3 -> python3.N` link is followed from ls's own `->`
# output, not by readlink. A link elsewhere, or a directory above that is a link: trust_check.
boot_trust() {
  case $1 in /?*/*) ;; *)
    trust_check "$1"
    return 0
    ;;
  esac
  _bd=${1%/*} _bl=
  _tp=$_bd
  while [ -n "$_tp" ]; do
    _bl="$_bl$_tp$NL"
    _tp=${_tp%/*}
  done
  _tl=$_bl$1$NL
  for _bs in "$_bd"/python3.[0-9]*; do
    [ -e "$_bs" ] && _tl="$_tl$_bs$NL"
  done
  _tifs=$IFS
  IFS=$NL
  set -f
  # shellcheck disable=SC2086 # one operand a line
  _bls=$(deadline ls -ldn -- / $_tl 2>/dev/null)
  _tls= _bt= _bok=1
  for _bln in $_bls; do
    case $_bln in
      *" $1 -> "*)
        _bt=${_bln#*" $1 -> "}
        case $_bt in /*) ;; *) _bt=$_bd/$_bt ;; esac
        _tls="$_tls$_bln$NL"
        ;;
      *" $1") _tls="$_tls$_bln$NL" ;;
    esac
  done
  for _bln in $_bls; do
    case $_bln in
      *" $1 -> "* | *" $1") continue ;;
      *" /")
        _tls="$_tls$_bln$NL"
        continue
        ;;
    esac
    if [ -n "$_bt" ] && [ "${_bt%/*}" = "$_bd" ]; then
      case $_bln in *" $_bt")
        case $_bln in -*) _tls="$_tls$_bln$NL" _bt=: ;; *) _bok= ;; esac
        continue
        ;;
      esac
    fi
    for _bp in $_bl; do
      case $_bln in *" $_bp")
        case $_bln in d*) _tls="$_tls$_bln$NL" ;; *) _bok= ;; esac
        ;;
      esac
    done
  done
  set +f
  IFS=$_tifs
  # every line found, the link (if any) followed to a regular file beside it
  case $_bt in '' | :) ;; *) _bok= ;; esac
  _bn=0
  for _bp in / $_bl $1; do _bn=$((_bn + 1)); done
  [ "$_bt" = : ] && _bn=$((_bn + 1))
  _bc=0
  while IFS= read -r _bln; do [ -n "$_bln" ] && _bc=$((_bc + 1)); done <<DT_BOOT_EOF
$_tls
DT_BOOT_EOF
  if [ -z "$_bok" ] || [ "$_bc" != "$_bn" ]; then
    trust_check "$1"
    return 0
  fi
  _tls=${_tls%"$NL"}
  trust_lines
}

# hx_boot — start the host helper: this machine's own python3 (never the tree's) that the trust
# rule lets run (owned by root and not writable by others: the probing user is not known yet),
# given pyfacts.py on stdin. It picks the temp dir as pick_tmpdir would (the same notes), makes
# its FIFOs there and serves in the background; status 1 (the sh path) where there is none.
# DT_PROBE_PATH: auto (the default), py (no usable Python is an error), sh (never start it).
hx_boot() {
  case ${DT_PROBE_PATH:-auto} in
    sh) return 1 ;;
    auto | py) ;;
    *)
      rec error probe "DT_PROBE_PATH=$DT_PROBE_PATH: use auto, py or sh"
      exit 3
      ;;
  esac
  _hxp=
  for _hp in /usr/bin/python3 /usr/local/bin/python3 /bin/python3; do
    [ -f "$_hp" ] && [ -x "$_hp" ] || continue
    MYUID=0
    boot_trust "$_hp"
    MYUID=
    if [ -z "$_tw" ]; then
      _hxp=$_hp
      break
    fi
  done
  _hb=
  # shellcheck disable=SC2016 # the helper's source, single-quoted by probes.probe_script()
  [ -n "$_hxp" ] && _hb=$(with_pyfacts "$_hxp" -E -S -c "$DT_HOSTHELPER" "$$" "$T" 2>/dev/null)
  case $_hb in
    HXD=*) ;;
    *)
      if [ "${DT_PROBE_PATH:-}" = py ]; then
        rec error probe "DT_PROBE_PATH=py: no python3 >= 3.8 the trust rule lets run in /usr/bin, /usr/local/bin or /bin"
        exit 3
      fi
      return 1
      ;;
  esac
  HXNOTES=
  eval "$_hb"
  _hifs=$IFS
  IFS=$NL
  set -f
  for _hn in $HXNOTES; do rec note tmp "$_hn"; done
  set +f
  IFS=$_hifs
  BGDIR=$HXD
  printf '@@detective-tui-tmpdir %s\n' "$BGDIR"
}

# sweep_tmp DIR — remove our own detective-tui.PID.* directories whose probe is gone: made in
# this PID namespace ($_tag in their `probe` file), their pid no longer there.
sweep_tmp() {
  for _old in "$1"/detective-tui.*.??????; do
    [ -d "$_old" ] && [ -O "$_old" ] || continue
    _op=${_old##*/detective-tui.}
    _op=${_op%%.*}
    case $_op in '' | *[!0-9]*) continue ;; esac
    _otag=
    { read -r _otag <"$_old/probe"; } 2>/dev/null
    [ "$_otag" = "$_tag" ] || continue
    kill -0 "$_op" 2>/dev/null && continue
    rm -rf "$_old"
  done
}

cleanup() {
  if [ -n "$LOGIN_PID" ] && [ -n "$BGDIR" ]; then
    # stopped mid-probe: the login shell's own session goes too
    _lsid=
    { read -r _lsid <"$BGDIR/login.pid"; } 2>/dev/null
    case $_lsid in '' | *[!0-9]* | 1) ;; *) kill -TERM "-$_lsid" 2>/dev/null ;; esac
  fi
  # stopped by a signal, the helper may be busy for this shell: it answers what still waits
  # on its FIFOs, then removes the dir itself once this shell is gone (hosthelper)
  if hxon; then
    [ -n "$DT_SIG" ] && return 0
    HCH=0
    hx quit
  elif [ -n "$BGDIR" ]; then
    rm -rf "$BGDIR"
  fi
}
DT_SIG=
trap cleanup EXIT
trap 'DT_SIG=1; exit 129' HUP
trap 'DT_SIG=1; exit 130' INT
trap 'DT_SIG=1; exit 141' PIPE
trap 'DT_SIG=1; exit 143' TERM

# How to start the login shell in a session of its own, apart from any controlling terminal:
# under a PTY (ssh -tt, srun --pty, kubectl exec -t, Ansible) an interactive shell outside the
# terminal's foreground process group stops on SIGTTIN until its deadline. setsid, else the
# host's Python (os.setsid), else none (ctx_login then reads a plain login shell).
DT_SH=$(command -v sh 2>/dev/null) || DT_SH=/bin/sh
DETACH=
DT_HOSTPY=
if command -v setsid >/dev/null 2>&1; then
  DETACH=setsid
elif DT_HOSTPY=$(command -v python3 2>/dev/null) && [ -n "$DT_HOSTPY" ]; then
  DETACH=python
fi

# the nvidia-smi part runs in the background (it is the slowest, and can hang); each call keeps
# at most SMI_CAP bytes of its output (the largest real table in shared/fixtures, 8 H200s, is
# 4538 bytes; 256 KiB holds about 2800 more 91-byte process lines)
SMI_CAP=262144
SMI_PID=
LOGIN_PID=
smi_job() {
  _smi=
  _sifs=$IFS
  IFS=:
  set -f
  for _d in $PATH; do
    case $_d in /*) ;; *) continue ;; esac
    if [ -z "$_smi" ] && is_exe "$_d/nvidia-smi"; then _smi=$_d/nvidia-smi; fi
  done
  set +f
  IFS=$_sifs
  [ -n "$_smi" ] || { is_exe /usr/bin/nvidia-smi && _smi=/usr/bin/nvidia-smi; }
  # a wedged driver can block reads of its /proc file: read it under the deadline too
  if [ -r "$R/proc/driver/nvidia/version" ]; then
    run cat "$R/proc/driver/nvidia/version"
    emit_lines drvproc - "$_out"
  else
    rec drvproc-missing -
  fi
  if [ -z "$_smi" ]; then
    rec smipath -
    return 0
  fi
  rec smipath "$_smi"
  if ! trusted "$_smi"; then
    rec notrun nvidia-smi "$_smi: $_tw"
    return 0
  fi
  smi_pair "$R$_smi" --query-gpu="$SMI_ALL" --format=csv,noheader
  cap_trim "nvidia-smi table" "$SMI_CAP"
  _tbl=$_out
  emit_lines smi table "$_out"
  rec smirc table "$_rc"
  case $_rc in
    124 | 137)
      rec timeout nvidia-smi
      return 0
      ;;
    0) ;;
    *) return 0 ;;
  esac
  # one call for the query, live-state and fabric fields (split into the records the three
  # calls below give); a refused field (an older nvidia-smi) falls back to those calls
  _out=$_qo _rc=$_qrc _cut=$_qcut
  cap_trim "nvidia-smi --query-gpu" "$SMI_CAP"
  case $_rc in
    0) if smi_split "$_out"; then
      emit_lines smi query "$_sq"
      rec smirc query 0
      case $_sq in *"$NL"*) probe_fabric "$_sf" ;; esac
      emit_lines smi state "$_ss"
      rec smirc state 0
      case $_tbl in *"Enabled |"*) ;; *) return 0 ;; esac
      smi_list
      return 0
    fi ;;
    124 | 137)
      rec timeout "nvidia-smi --query-gpu"
      return 0
      ;;
  esac
  run_cap "nvidia-smi --query-gpu" "$SMI_CAP" "$R$_smi" \
    --query-gpu=index,name,compute_cap,memory.total,uuid --format=csv,noheader
  emit_lines smi query "$_out"
  rec smirc query "$_rc"
  _qry=$_out
  case $_rc in
    0)
      # two or more GPUs: each one's NVLink fabric registration (probe_fabric)
      case $_qry in *"$NL"*) probe_fabric ;; esac
      # live state, as nvitop shows it (the processes come from the table above)
      run_cap "nvidia-smi state" "$SMI_CAP" "$R$_smi" \
        --query-gpu=index,utilization.gpu,memory.used,memory.total,temperature.gpu \
        --format=csv,noheader,nounits
      emit_lines smi state "$_out"
      rec smirc state "$_rc"
      # a GPU in MIG mode: its MIG devices and their UUIDs come from -L
      case $_tbl in *"Enabled |"*) ;; *) return 0 ;; esac
      ;;
    124 | 137)
      rec timeout "nvidia-smi --query-gpu"
      return 0
      ;;
  esac
  # an older nvidia-smi without a field we asked for: full names and UUIDs from -L
  smi_list
}

# smi_pair SMI QUERY-ARG… — (smi_job) the table and the one --query-gpu call started together:
# each waits on the driver's initialisation, so together the probe waits once. The table in
# _out/_rc/_cut, the query in _qo/_qrc/_qcut, each under its own deadline and SMI_CAP, neither
# trimmed yet (cap_trim). The helper starts both (cap2); the sh path runs the query as a
# background job of this shell (no new program) writing to $BGDIR, and runs it again in the
# foreground when that file lost it (a full disk) or there is no $BGDIR.
smi_pair() {
  _sp=$1
  shift
  if hxon; then
    _h2o= _h2x= _h2r=125
    hx cap2 "$SMI_CAP" 1 "$_sp" "$_sp" "$@"
    _out=$_ho _rc=$_hr _cut=$_hx _qo=$_h2o _qrc=$_h2r _qcut=$_h2x
    return 0
  fi
  _cap=$SMI_CAP _qf= _qrc=
  if [ -n "$BGDIR" ]; then
    _qf=$BGDIR/smiq.out
    (
      run_cap_sh "$_sp" "$@"
      printf '%s\n@@DTQ\n%s\n%s\n' "$_out" "$_cut" "$_rc"
    ) >"$_qf" 2>/dev/null &
    _qpid=$!
  fi
  run_cap_sh "$_sp"
  _tout=$_out _trc=$_rc _tcut=$_cut
  if [ -n "$_qf" ]; then
    wait "$_qpid"
    smi_pair_read
  fi
  if [ -z "$_qrc" ] && [ "$_trc" = 0 ]; then
    run_cap_sh "$_sp" "$@"
    _qo=$_out _qrc=$_rc _qcut=$_cut
  fi
  _out=$_tout _rc=$_trc _cut=$_tcut
}

# smi_pair_read — the background query's answer from $_qf (output, @@DTQ, cut, status) in
# _qo/_qcut/_qrc; _qrc empty when the file does not hold it whole.
smi_pair_read() {
  _qb=
  { while IFS= read -r _ln; do _qb="$_qb$_ln$NL"; done <"$_qf"; } 2>/dev/null
  _qb=${_qb%"$NL"}
  _qrc=${_qb##*"$NL"}
  _qb=${_qb%"$NL"*}
  _qcut=${_qb##*"$NL"}
  _qb=${_qb%"$NL"*}
  case $_qb in *"$NL@@DTQ") ;; *) _qrc= ;; esac
  case $_qrc$_qcut in "" | *[!0-9]*) _qrc= ;; esac
  _qo=${_qb%"$NL@@DTQ"}
}

smi_list() {
  run_cap "nvidia-smi -L" "$SMI_CAP" "$R$_smi" -L
  emit_lines smi list "$_out"
  rec smirc list "$_rc"
}

# the fields of the one --query-gpu call: those of the query, the live state (STATE_FIELDS in
# tui/core/facts/gpu_state.py) and the fabric, in this order
SMI_ALL=index,name,compute_cap,memory.total,uuid,utilization.gpu,memory.used,temperature.gpu
SMI_ALL=$SMI_ALL,fabric.state,fabric.status

# smi_split TEXT — the lines of the one --query-gpu call (SMI_ALL, with units) as the lines the
# query (_sq), state (_ss: units cut off, as --format=…,nounits) and fabric (_sf) calls print. The
# fields after the query's are cut from the right, so a name holding ", " stays whole. Fails
# (the caller falls back to the three calls) on a line with fewer fields.
smi_split() {
  _sq= _ss= _sf= _sifs=$IFS
  IFS=$NL
  set -f
  for _ln in $1; do
    _r=$_ln
    for _sv in _sfs _sft _stp _sus _sut; do
      case $_r in *", "*) ;; *)
        set +f
        IFS=$_sifs
        return 1
        ;;
      esac
      eval "$_sv=\${_r##*, }"
      _r=${_r%, *}
    done
    case $_r in *", "*", "*", "*", "*) ;; *)
      set +f
      IFS=$_sifs
      return 1
      ;;
    esac
    _six=${_r%%, *} _smt=${_r%, *}
    _smt=${_smt##*, }
    _sq="$_sq${_sq:+$NL}$_r"
    _sf="$_sf${_sf:+$NL}$_six, $_sft, $_sfs"
    _sl=$_six
    for _sv in "$_sut" "$_sus" "$_smt" "$_stp"; do
      _sv=${_sv% %}
      _sv=${_sv% MiB}
      _sl="$_sl, ${_sv% C}"
    done
    _ss="$_ss${_ss:+$NL}$_sl"
  done
  set +f
  IFS=$_sifs
  [ -n "$_sq" ]
}

# probe_fabric — (in smi_job) each GPU's fabric.state and fabric.status: on an NVSwitch system
# (HGX/DGX A100, H100, H200, B200) a GPU stays "In Progress" until the fabric manager has
# registered it, and CUDA fails with error 802 until then; other GPUs say N/A or Not
# Supported. Only where a GPU joins a fabric: the nv-fabricmanager processes (/proc/PID/comm,
# cut to 15 characters) and the nvidia-fabricmanager* packages dpkg lists, with their versions.
# With an argument, the fabric lines the one --query-gpu call gave (smi_split).
probe_fabric() {
  if [ $# -gt 0 ]; then
    _out=$1 _rc=0
  else
    run_cap "nvidia-smi fabric" "$SMI_CAP" "$R$_smi" \
      --query-gpu=index,fabric.state,fabric.status --format=csv,noheader
  fi
  emit_lines smi fabric "$_out"
  rec smirc fabric "$_rc"
  [ "$_rc" -eq 0 ] || return 0
  case $_out in *"In Progress"* | *"Not Started"* | *Completed*) ;; *) return 0 ;; esac
  if hxon; then
    hx grepx nv-fabricmanage "$R"/proc/[0-9]*/comm
    _fms=$_ho
  else
    _fms=$(deadline grep -l -x 'nv-fabricmanage' "$R"/proc/[0-9]*/comm 2>/dev/null)
  fi
  _ffs=$IFS
  IFS=$NL
  set -f
  for _fc in $_fms; do
    _fc=${_fc%/comm}
    rec fm pid "${_fc##*/}" -
  done
  if [ -r "$R/var/lib/dpkg/status" ]; then
    _fpk=
    if hxon; then
      hx greplines '^(Package|Version): ' "$R/var/lib/dpkg/status"
      _fpl=$_ho
    else
      _fpl=$(deadline grep -E '^(Package|Version): ' "$R/var/lib/dpkg/status" 2>/dev/null)
    fi
    for _fl in $_fpl; do
      case $_fl in
        "Package: "*) _fpk=${_fl#Package: } ;;
        "Version: "*) case $_fpk in nvidia-fabricmanager*) rec fm pkg "$_fpk" "${_fl#Version: }" ;; esac ;;
      esac
    done
  fi
  set +f
  IFS=$_ffs
}

start_smi() {
  if [ -n "$BGDIR" ]; then
    (
      HCH=1
      smi_job
      echo __DT_SMI_DONE__
    ) >"$BGDIR/smi.out" 2>&1 &
    SMI_PID=$!
  else
    smi_job
  fi
}

# smi_line LINE — one line of the background job's smi.out: a record is kept in _sout, the
# job's end mark sets _sdone
smi_line() {
  case $1 in
    @@DT1"$TAB"*) _sout="$_sout$1$NL" ;;
    __DT_SMI_DONE__) _sdone=1 ;;
  esac
}

finish_smi() {
  [ -n "$SMI_PID" ] || return 0
  wait "$SMI_PID"
  SMI_PID=
  _sout= _sdone=
  if hxon; then
    # one read of the file (the read builtin takes a byte per system call)
    hx cat "$BGDIR/smi.out"
    _sfifs=$IFS
    IFS=$NL
    set -f
    for _ln in $_ho; do smi_line "$_ln"; done
    set +f
    IFS=$_sfifs
  else
    { while IFS= read -r _ln || [ -n "$_ln" ]; do smi_line "$_ln"; done <"$BGDIR/smi.out"; } 2>/dev/null
  fi
  if [ -n "$_sdone" ]; then
    printf '%s' "$_sout"
  else # the temp file lost it (a full disk): once more, in the foreground
    rec note tmp "nvidia-smi output lost in $BGDIR; run again in the foreground"
    smi_job
  fi
}

# py_entry ENTRY — an interpreter entry of PYS ("PATH<TAB>SOURCE<TAB>CID<TAB>…"): _pp as named,
# _rpp where it is (a bare name: the first match on the session's PATH), _psrc, _pctx.
py_entry() {
  _pp=${1%%"$TAB"*}
  _rpp=$_pp
  case $_pp in
    */*) ;;
    *)
      _peifs=$IFS
      IFS=:
      for _d in $PATH; do
        case $_d in /*) ;; *) continue ;; esac
        if is_exe "$_d/$_pp"; then _rpp=$_d/$_pp; break; fi
      done
      IFS=$_peifs
      ;;
  esac
  _rest=${1#*"$TAB"}
  _psrc=${_rest%%"$TAB"*}
  _rest=${_rest#*"$TAB"}
  _pctx=${_rest%%"$TAB"*}
}

# py_plan INDEX — how the interpreter of py_entry runs, under the trust rule: _pkey (an
# interpreter seen before runs once: serving processes once per import-path environment), _pcx,
# _drop*, _readfor, _pyrun; status 1 when it does not run. The records the decision makes are
# kept in _pyrecs (one a line) for the caller to print: py_prefetch makes the same decision.
# py_refused INDEX ERROR — py_plan's records for an interpreter that does not run, in _pyrecs
py_refused() {
  recline py "$1" error "$2"
  _pyrecs=$_l$NL
  recline notrun "python $_pp" "$_tw"
  _pyrecs=$_pyrecs$_l$NL
}

py_plan() {
  _pyrecs=
  _pkey=$_rpp _pcx=
  if [ "$_psrc" = process ]; then
    eval "_e=\${_pxr_$_pctx:-}"
    if [ "$_e" = 1 ]; then
      _pcx=$_pctx
      eval "_pkey=\"\$_pkey|\$_pxh_$_pctx|\$_pxp_$_pctx|\$_pxb_$_pctx|\$_pxn_$_pctx|\$_pxc_$_pctx\""
      eval "_pkey=\"\$_pkey|\$_pxf_$_pctx|\$_pxz_$_pctx\""
    fi
  fi
  # the trust rule: a program another user controls runs as the serving process's owner
  # (drop_to) or not at all
  _drop= _dropu= _dropg= _readfor=
  if [ -n "$R" ] && ! trusted "$_rpp"; then
    # an inspected tree's interpreter never runs: the host's own Python reads its files
    if host_python; then
      _readfor=$R$_rpp
      _pkey="$_pkey|read"
      recline py "$1" read_by "$_hostpy"
      _pyrecs=$_l$NL
    else
      py_refused "$1" "not run: $_tw; no trusted python3 on this host to read its files"
      return 1
    fi
  elif ! trusted "$_rpp"; then
    _pu= _pg=
    [ -z "$R" ] && [ "$_psrc" = process ] && eval "_pu=\${_pxu_$_pctx:-} _pg=\${_pxg_$_pctx:-}"
    if [ -z "$R" ] && [ "$_psrc" = process ] && drop_to "$_pu" "$_pg"; then
      _pkey="$_pkey|uid $_pu"
      if [ -n "$_drop" ]; then
        recline py "$1" run_as "$_pu"
        _pyrecs=$_l$NL
      fi
    else
      py_refused "$1" "not run: $_tw"
      return 1
    fi
  fi
  _pyrun=$R$_rpp
  [ -n "$_readfor" ] && _pyrun=$_hostpy
  return 0
}

# py_prefetch [go] — with the helper, each interpreter's pyfacts run that probe_pythons will
# make, asked for now (`hx pre`: the helper keeps the answer until that request comes,
# identical): it runs while the probe does the rest. Called once MYUID is known and again, with
# `go`, once the serving processes are; a request already asked for is not asked again. The
# helper holds them until `go` (`hx prego`), then starts one Python per interpreter and user for
# all its requests (the inventory's view and each serving process's import path).
py_prefetch() {
  hxon || return 0
  _ppi=0 _ppk=
  _pfifs=$IFS
  IFS=$NL
  set -f
  _inv=
  for _ip in ${DT_PYTHONS:-}; do
    [ -n "$_ip" ] && _inv="$_inv$_ip${TAB}inventory${TAB}0$TAB$NL"
  done
  for _entry in $_inv$PYS; do
    IFS=$_pfifs
    _ppi=$((_ppi + 1))
    py_entry "$_entry"
    [ -e "$R$_rpp" ] && [ -x "$R$_rpp" ] || continue
    py_plan "$_ppi" || continue
    case "$NL$_ppk" in *"$NL$_pkey$NL"*) continue ;; esac
    _ppk="$_ppk$_pkey$NL"
    run_pyfacts "$_ppi" "$_pyrun" "$_pcx" pre
  done
  set +f
  IFS=$_pfifs
  [ -z "${1:-}" ] || hx prego
}

probe_pythons() {
  _i=0
  _pifs=$IFS
  IFS=$NL
  set -f
  _inv=
  for _ip in ${DT_PYTHONS:-}; do
    [ -n "$_ip" ] && _inv="$_inv$_ip${TAB}inventory${TAB}0$TAB$NL"
  done
  PYS=$_inv$PYS
  for _entry in $PYS; do TOTAL=$((TOTAL + 1)); done
  for _entry in $PYS; do
    IFS=$_pifs
    _i=$((_i + 1))
    py_entry "$_entry"
    step "python $_pp"
    rec py "$_i" path "$_pp"
    rec py "$_i" source "$_psrc"
    rec py "$_i" context "$_pctx"
    if [ ! -e "$R$_rpp" ]; then
      rec py "$_i" exists 0
      continue
    fi
    rec py "$_i" exists 1
    if [ ! -x "$R$_rpp" ]; then
      rec py "$_i" error "not executable"
      continue
    fi
    py_plan "$_i"
    _pyok=$?
    printf '%s' "$_pyrecs"
    [ "$_pyok" = 0 ] || continue
    _seenpy=
    case "$NL$PYRAN" in *"$NL$_pkey$TAB"*)
      _seenpy=$NL$PYRAN
      _seenpy=${_seenpy#*"$NL$_pkey$TAB"}
      _seenpy=${_seenpy%%"$NL"*}
      ;;
    esac
    if [ -n "$_seenpy" ]; then
      eval "_out=\$_pyo_$_seenpy _rc=\$_pyr_$_seenpy"
    else
      run_pyfacts "$_i" "$_pyrun" "$_pcx"
      eval "_pyo_$_i=\$_out _pyr_$_i=\$_rc"
      PYRAN="$PYRAN$_pkey$TAB$_i$NL"
    fi
    IFS=$NL
    for _ln in $_out; do
      case $_ln in
        @@DT1"$TAB"py"$TAB"* | @@DT1"$TAB"pydist"$TAB"* | @@DT1"$TAB"pymeta"$TAB"* | \
          @@DT1"$TAB"pyfile"$TAB"* | @@DT1"$TAB"pyext"$TAB"* | @@DT1"$TAB"pyinst"$TAB"*)
          # pyfacts escaped its fields; the interpreter's records only, under this index
          _k=${_ln#@@DT1"$TAB"}
          _r=${_k#*"$TAB"}
          case $_r in *"$TAB"*) _r=${_r#*"$TAB"} ;; *) _r= ;; esac
          printf '%s\n' "@@DT1$TAB${_k%%"$TAB"*}$TAB$_i$TAB$_r"
          case $_ln in *"${TAB}pip_nvcc$TAB"*)
            _nv=${_ln##*"$TAB"}
            home_of "$_nv"
            tk_add "pip:$_pp" "$_h"
            ;;
          esac
          case $_ln in *"${TAB}triton_ptxas$TAB"*) ptxas_add "${_ln##*"$TAB"}" ;; esac
          ;;
        *) rec py "$_i" stderr "$_ln" ;;
      esac
    done
    rec pyrc "$_i" "$_rc"
    case $_rc in 124 | 137) rec timeout "python $_pp" ;; esac
  done
  set +f
  IFS=$_pifs
}

# tk_found — the toolkits found where they are installed (/usr/local/cuda*, /opt/cuda*, the HPC
# SDK, conda), as tk_add lines in _tkf
tk_found() {
  _tkf=
  [ -e "$R/usr/local/cuda" ] && _tkf="/usr/local/cuda$TAB/usr/local/cuda$NL"
  for _tk in "$R"/usr/local/cuda-* "$R"/opt/cuda* "$R"/opt/nvidia/hpc_sdk/*/*/cuda/*; do
    [ -e "$_tk/bin/nvcc" ] || continue
    case ${_tk#"$R"} in
      /usr/local/*) _tkf="$_tkf/usr/local/cuda-*$TAB${_tk#"$R"}$NL" ;;
      /opt/cuda*) _tkf="$_tkf/opt/cuda*$TAB${_tk#"$R"}$NL" ;;
      *) _tkf="${_tkf}hpc_sdk$TAB${_tk#"$R"}$NL" ;;
    esac
  done
  for _cb in "$R$HOME"/miniconda3 "$R$HOME"/anaconda3 "$R$HOME"/miniforge3 "$R"/opt/conda; do
    for _ce in "$_cb" "$_cb"/envs/*; do
      [ -e "$_ce/bin/nvcc" ] && _tkf="${_tkf}conda:${_ce#"$R"}$TAB${_ce#"$R"}$NL"
    done
  done
}

# nvcc_run NVCC — what answers for that nvcc (a host path): in _run (with the root prefix) the
# nvcc itself, or the one its wrapper script execs (`exec /abs/nvcc`, the last such line), and
# in _wofs each wrapped path the script names, one a line
nvcc_run() {
  _run=$R$1 _wofs=
  _first=
  { IFS= read -r _first <"$R$1"; } 2>/dev/null
  case $_first in
    '#!'*)
      while IFS= read -r _wl || [ -n "$_wl" ]; do
        case $_wl in
          *exec\ *nvcc*)
            _w=${_wl#*exec }
            _w=${_w%% *}
            _w=${_w#\"}
            _w=${_w%\"}
            case $_w in /*)
              _wofs="$_wofs$_w$NL"
              # the wrapped nvcc is what answers: it runs once, wherever it is reached from
              is_exe "$_w" && _run=$R$_w
              ;;
            esac
            ;;
        esac
      done <"$R$1"
      ;;
  esac
}

# nvcc_key — the key the nvcc in _run runs once under, in _key: the same nvcc reached through
# another home (symlink, wrapper) runs once
nvcc_key() {
  resolve "${_run#"$R"}"
  _key=$_res
  case $_key in */bin/nvcc) resolve "${_key%/bin/nvcc}" && _key=$_res/bin/nvcc ;; esac
}

# tk_prefetch — with the helper, the `nvcc --version` runs probe_toolkits will make for the
# toolkits known now (the contexts' and those found installed), started now (`hx pre`); a
# toolkit an interpreter names (pip) is not known yet and runs when its turn comes.
tk_prefetch() {
  hxon || return 0
  tk_found
  _tpk=
  _tpifs=$IFS
  IFS=$NL
  set -f
  for _c in $TKC$_tkf; do
    IFS=$_tpifs
    _h=${_c#*"$TAB"}
    _nvcc=$_h/bin/nvcc
    [ "$_h" = / ] && _nvcc=/bin/nvcc
    [ -e "$R$_nvcc" ] && [ -x "$R$_nvcc" ] || continue
    nvcc_run "$_nvcc"
    nvcc_key
    case "$NL$_tpk" in *"$NL$_key$NL"*) continue ;; esac
    _tpk="$_tpk$_key$NL"
    is_elf64 "$_run" && elf_here "$_run" && continue
    trusted "${_run#"$R"}" && hx pre run "$_run" --version
  done
  set +f
  IFS=$_tpifs
}

probe_toolkits() {
  tk_found
  TKC=$TKC$_tkf
  _homes=
  _tid=0
  _tifs=$IFS
  IFS=$NL
  set -f
  for _c in $TKC; do
    _src=${_c%%"$TAB"*}
    _home=${_c#*"$TAB"}
    case "$NL$_homes" in
      *"$NL$_home$NL"*)
        rec tkcand "$_src" "$_home"
        continue
        ;;
    esac
    _homes="$_homes$_home$NL"
    _tid=$((_tid + 1))
    rec tk "$_tid" "$_home"
    rec tkcand "$_src" "$_home"
    IFS=$_tifs
    probe_toolkit "$_tid" "$_home"
    IFS=$NL
  done
  set +f
  IFS=$_tifs
  probe_ptxas
  probe_ldcache
}

probe_toolkit() {
  _nvcc=$2/bin/nvcc
  [ "$2" = / ] && _nvcc=/bin/nvcc
  rec tkkv "$1" nvcc "$_nvcc"
  resolve "$2"
  [ "$_res" != "$2" ] && rec tkkv "$1" realpath "$_res"
  if [ ! -e "$R$_nvcc" ]; then
    rec tkkv "$1" exists 0
    [ -d "$R$2" ] || rec tkkv "$1" dir 0
    # no compiler: is it a runtime-only tree (a CUDA runtime image's /usr/local/cuda)?
    case $- in *f*) _nf=1 ;; *) _nf= ;; esac
    set +f
    for _cr in "$R$2"/lib64/libcudart.so* "$R$2"/lib/libcudart.so* "$R$2"/targets/*/lib/libcudart.so*; do
      if [ -e "$_cr" ]; then
        rec tkkv "$1" cudart "${_cr#"$R"}"
        break
      fi
    done
    [ -n "$_nf" ] && set -f
    return 0
  fi
  rec tkkv "$1" exists 1
  is_exe "${_nvcc%/nvcc}/ptxas" && rec tkkv "$1" ptxas "${_nvcc%/nvcc}/ptxas"
  # the runtime headers a JIT build includes (CCCL #errors when they are another release)
  _hdr=$R$2/include/cuda_runtime_api.h
  if [ -f "$_hdr" ]; then
    if hxon; then
      hx greplines '^#define CUDART_VERSION' "$_hdr" 1
      _hv=$_ho
    else
      _hv=$(deadline grep -m 1 '^#define CUDART_VERSION' "$_hdr" 2>/dev/null)
    fi
    rec tkkv "$1" cudart_define "$_hv"
  fi
  nvcc_run "$_nvcc"
  _wifs=$IFS
  IFS=$NL
  for _w in $_wofs; do rec tkkv "$1" wrapper_of "$_w"; done
  IFS=$_wifs
  if [ -x "$R$_nvcc" ]; then
    rec tkkv "$1" executable 1
    nvcc_key
    _seen_tid=
    case "$NL$TKRAN" in *"$NL$_key$TAB"*)
      _seen_tid=${TKRAN#*"$_key$TAB"}
      _seen_tid=${_seen_tid%%"$NL"*}
      ;;
    esac
    _rc=
    if [ -n "$_seen_tid" ]; then
      eval "_out=\$_tko_$_seen_tid _rc=\$_tkr_$_seen_tid"
    elif nvcc_bin "$_run"; then
      eval "_tko_$1=\$_out _tkr_$1=bin"
      TKRAN="$TKRAN$_key$TAB$1$NL"
      _rc=bin
    fi
    if [ "$_rc" = bin ]; then
      emit_lines tkbin "$1" "$_out"
      return 0
    fi
    if ! trusted "${_run#"$R"}"; then
      nvcc_files "$1" "$2" "$_run"
      return 0
    fi
    if [ -n "$_seen_tid" ]; then
      eval "_out=\$_tko_$_seen_tid _rc=\$_tkr_$_seen_tid"
    else
      run "$_run" --version
      eval "_tko_$1=\$_out _tkr_$1=\$_rc"
      TKRAN="$TKRAN$_key$TAB$1$NL"
    fi
    emit_lines tkout "$1" "$_out"
    rec tkrc "$1" "$_rc"
    case $_rc in 124 | 137) rec timeout "nvcc $_nvcc" ;; esac
  else
    rec tkkv "$1" executable 0
  fi
  [ "$_rc" = 0 ] && [ -x "$R$_nvcc" ] && return 0
  emit_file tkjson "$1" "$R$2/version.json" || true
}

# ---- what the host records about its changes (record kinds chg, pyinst; probes/README.md) ----
# Bounded reads of files only — the tails of the package logs (apt history.log, dpkg.log,
# dnf.rpm.log; CUDA/NVIDIA lines of dpkg and rpm), the times of the kernel module, the JIT
# cache dirs and the serving processes' starts — plus `systemctl show` for a unit's restart
# count on the host itself (never under a root prefix: that systemd is not the tree's).
CHG_JIT=
CHG_PIDS=
CHG_TAIL=65536
chg_lines() { # chg_lines WHAT TEXT [FILTER]: one chg record per line (FILTER: cuda only)
  _cifs=$IFS
  IFS=$NL
  set -f
  for _ln in $2; do
    if [ -n "${3:-}" ]; then
      case $_ln in *nvidia* | *cuda* | *cudnn* | *nccl* | *NVIDIA* | *CUDA*) ;; *) continue ;; esac
    fi
    case $1 in
      apt) case $_ln in Start-Date:* | Commandline:* | Requested-By:* | Install:* | Upgrade:* | Remove:* | Purge:* | End-Date:*) ;; *) continue ;; esac ;;
      dpkg) case $_ln in *" install "* | *" upgrade "* | *" remove "* | *" purge "*) ;; *) continue ;; esac ;;
      rpm) case $_ln in *Upgrade:* | *Upgraded:* | *Install:* | *Installed:* | *Erase:* | *Obsoleted:*) ;; *) continue ;; esac ;;
    esac
    rec chg "$1" - "$_ln"
  done
  set +f
  IFS=$_cifs
}

probe_changes() {
  for _cf in apt:/var/log/apt/history.log dpkg:/var/log/dpkg.log rpm:/var/log/dnf.rpm.log; do
    _cp=$R${_cf#*:}
    [ -f "$_cp" ] && [ -r "$_cp" ] || continue
    run tail -c "$CHG_TAIL" "$_cp"
    [ "$_rc" = 0 ] || continue
    case ${_cf%%:*} in apt) chg_lines apt "$_out" ;; *) chg_lines "${_cf%%:*}" "$_out" 1 ;; esac
  done
  _paths=
  [ -e "$R/sys/module/nvidia" ] && _paths=$R/sys/module/nvidia$NL
  _paths=$_paths$CHG_JIT
  if [ -n "$_paths" ]; then
    _cifs=$IFS
    IFS=$NL
    set -f
    # shellcheck disable=SC2086
    run stat -c '%Y %n' $_paths
    set +f
    IFS=$_cifs
    while IFS= read -r _ln; do
      case $_ln in [0-9]*" /"*) ;; *) continue ;; esac
      _cpath=${_ln#* }
      case $_cpath in
        "$R/sys/module/nvidia") rec chg module nvidia "${_ln%% *}" ;;
        *) rec chg jit "${_cpath#"$R"}" "${_ln%% *}" ;;
      esac
    done <<EOF_CHG
$_out
EOF_CHG
  fi
  _btime=
  while read -r _k _v; do [ "$_k" = btime ] && _btime=$_v; done <"$R/proc/stat" 2>/dev/null
  _hz=100
  for _cpid in $CHG_PIDS; do
    _st=
    { IFS= read -r _st <"$R/proc/$_cpid/stat"; } 2>/dev/null
    [ -n "$_st" ] && [ -n "$_btime" ] || continue
    # field 22 (starttime, clock ticks after boot), counted after the ") " that ends comm
    set -f
    # shellcheck disable=SC2086
    set -- ${_st##*) }
    set +f
    [ "$#" -ge 20 ] || continue
    shift 19
    case $1 in '' | *[!0-9]*) continue ;; esac
    rec chg start "$_cpid" "$((_btime + $1 / _hz))"
  done
  [ -z "$R" ] && command -v systemctl >/dev/null 2>&1 || return 0
  _cifs=$IFS
  IFS=$NL
  for _cu in $UNITS; do
    [ -n "$_cu" ] || continue
    run systemctl show "$_cu" -p NRestarts -p ActiveEnterTimestamp
    IFS=$NL
    for _ln in $_out; do
      case $_ln in NRestarts=* | ActiveEnterTimestamp=*) rec chg unit "$_cu" "$_ln" ;; esac
    done
  done
  IFS=$_cifs
}

# nvcc_files TID HOME NVCC — a toolkit whose nvcc may not run (the trust rule): its version from
# version.json, else version.txt, else the release string inside the (wrapped) nvcc binary.
nvcc_files() {
  _ntw=$_tw
  if emit_file tkjson "$1" "$R$2/version.json" || emit_file tkfile "$1" "$R$2/version.txt"; then
    _out=x
  else
    grep_release "$3"
    emit_lines tkfile "$1" "$_out"
  fi
  if [ -n "$_out" ]; then
    rec note trust "nvcc ${3#"$R"} not run ($_ntw): its version read from the toolkit's files"
  else
    rec notrun "nvcc ${3#"$R"}" "$_ntw; no version.json, version.txt or release string to read"
  fi
}

# ---- symptoms: the recent error lines of each serving unit's journal ---------------------
# probe_symptoms — for each unit the serving processes run under, the last SYMPTOM_SCAN lines
# of its journal (`journalctl -u UNIT -n SYMPTOM_SCAN --no-pager -o short-iso`, under the step
# deadline); of those, at most SYMPTOM_MAX that look like errors, each cut to 400 characters
# and masked (redact_line): `symptom unit UNIT LINE`. The inspecting side matches them against
# its error signatures. A real system only, with a journalctl the trust rule lets run (a root
# prefix has no journal of its own), except a fake tree detective-tui built (DT_TREE_EXEC=1),
# whose usr/bin/journalctl stands in for journald. A serving process under no unit: its own
# stdout and stderr when /proc/PID/fd/1 or 2 leads to a regular file (a log it was started
# with, `> vllm.log 2>&1`; not a pipe, socket or terminal), its last SYMPTOM_SCAN lines read
# with `tail` the same way: `symptom process "PID FILE" LINE`. A serving process in a container:
# the container's log (symptom_containers).
SYMPTOM_SCAN=200
SYMPTOM_MAX=20
# symptom_lines KIND NAME TEXT — the error-looking lines of TEXT as symptom records
symptom_lines() {
  _symn=0
  _slifs=$IFS
  IFS=$NL
  set -f
  for _syl in $3; do
    case $_syl in
      *[Ee]rror* | *ERROR* | *[Ff]atal* | *FATAL* | *[Ff]ailed* | *"undefined symbol"* | \
        *"cannot open shared object"* | *"not compatible"* | *"out of memory"* | \
        *"not defined for option"* | *"Unsupported gpu"* | *insufficient* | *"requires GPUs"* | \
        *"not yet initialized"* | *"stub library"* | *"gated repo"* | *"is restricted"* | \
        *"cache blocks"* | *"KV cache"* | *"timed out"* | *timeout*) ;;
      *) continue ;;
    esac
    _symn=$((_symn + 1))
    [ "$_symn" -le "$SYMPTOM_MAX" ] || break
    _syt=$(printf '%.400s' "$_syl")
    while :; do # tabs as spaces, with builtins
      case $_syt in *"$TAB"*) _syt="${_syt%%"$TAB"*} ${_syt#*"$TAB"}" ;; *) break ;; esac
    done
    redact_line "$_syt"
    rec symptom "$1" "$2" "$_rl"
  done
  set +f
  IFS=$_slifs
}

# symptom_fds PID — the regular files a bare serving process writes its stdout/stderr to
symptom_fds() {
  _syseen=
  for _syfd in 1 2; do
    [ -L "$R/proc/$1/fd/$_syfd" ] || continue
    read_link "$R/proc/$1/fd/$_syfd" || continue
    _sytg=$_rlk
    case $_sytg in /*) ;; *) continue ;; esac
    [ "$_sytg" = "$_syseen" ] && continue
    _syseen=$_sytg
    [ -f "$R$_sytg" ] && [ -r "$R$_sytg" ] || continue
    run tail -n "$SYMPTOM_SCAN" "$R$_sytg"
    [ "$_rc" -eq 0 ] && symptom_lines process "$1 $_sytg" "$_out"
  done
}

# symptom_containers — the log tail of each container a serving process runs in (`docker logs
# --tail SYMPTOM_SCAN ID`, podman's, or `crictl logs --tail N ID`: crictl's logs takes --tail,
# kubernetes-sigs/cri-tools cmd/crictl/logs.go), under the step deadline, when its binary passes
# the trust rule: `symptom container "NAME (ID12)" LINE` (ID12: the id as `docker ps` shows it;
# NAME from ctr_names, only when it is one of docker's name characters; else just ID12).
symptom_containers() {
  _scifs=$IFS
  IFS=$NL
  for _sc in $CONTAINERS; do
    _sce=${_sc%% *} _scid=${_sc#* }
    if [ -n "$R" ]; then
      [ "${DT_TREE_EXEC:-}" = 1 ] && [ -x "$R/usr/bin/$_sce" ] || continue
      _scb=$R/usr/bin/$_sce
    else
      _scb=$(command -v "$_sce" 2>/dev/null) || continue
      if ! trusted "$_scb"; then
        rec notrun "$_sce" "$_scb: $_tw"
        continue
      fi
    fi
    ctr_names "$_sce" "$_scb"
    run "$_scb" logs --tail "$SYMPTOM_SCAN" "$_scid"
    case $_rc in 124 | 137) rec timeout "$_sce logs" ;; esac
    [ "$_rc" -eq 0 ] || continue
    _scs=${_scid%"${_scid#????????????}"} _scn=
    case "$NL$CTR_NAMES$NL" in *"$NL$_scid "*)
      _scn=${CTR_NAMES#*"$_scid "}
      _scn=${_scn%%"$NL"*}
      ;;
    esac
    case $_scn in '' | *[!A-Za-z0-9_.,-]*) _scn= ;; *) redact_line "$_scn" && _scn=$_rl ;; esac
    [ "${#_scn}" -le 128 ] || _scn=
    symptom_lines container "${_scn:+$_scn (}$_scs${_scn:+)}" "$_out"
  done
  IFS=$_scifs
}

# ctr_names ENGINE BINARY — once per engine (docker, podman), all its containers' names: one
# `ps --no-trunc --format '{{.ID}} {{.Names}}'` under the step deadline, its output capped at
# CTR_NAMES_CAP bytes, appended to CTR_NAMES ("ID NAMES" lines). Refused or timed out: none,
# and the source stays the id. `.ID` and `.Names` are docker ps's documented placeholders
# (podman ps takes the same Go template). crictl's ps has no such format: its containers keep
# the id.
CTR_NAMES=
CTR_ASKED=
CTR_NAMES_CAP=65536
ctr_names() {
  case $1 in docker | podman) ;; *) return 0 ;; esac
  case " $CTR_ASKED " in *" $1 "*) return 0 ;; esac
  CTR_ASKED="$CTR_ASKED $1"
  run_cap "$1 ps" "$CTR_NAMES_CAP" "$2" ps --no-trunc --format '{{.ID}} {{.Names}}'
  case $_rc in
    0) CTR_NAMES="$CTR_NAMES$_out$NL" ;;
    124 | 137) rec timeout "$1 ps" ;;
  esac
}

# journal_bin — the journalctl that may run (trusted; a fake tree's only with DT_TREE_EXEC) in
# _syjc; status 1 where none
journal_bin() {
  _syjc=
  if [ -n "$R" ]; then
    [ "${DT_TREE_EXEC:-}" = 1 ] && [ -x "$R/usr/bin/journalctl" ] || return 1
    _syjc=$R/usr/bin/journalctl
  else
    _syjc=$(command -v journalctl 2>/dev/null) || return 1
    trusted "$_syjc" || return 1
  fi
}

# journal_prefetch — with the helper, each serving unit's journal read probe_symptoms will make,
# started now (`hx pre`, as py_prefetch): it runs while the interpreters are read.
journal_prefetch() {
  hxon && [ -n "$UNITS" ] && journal_bin || return 0
  _syifs=$IFS
  IFS=$NL
  for _syu in $UNITS; do
    [ -n "$_syu" ] && hx pre run "$_syjc" -u "$_syu" -n "$SYMPTOM_SCAN" --no-pager -o short-iso
  done
  IFS=$_syifs
}

probe_symptoms() {
  for _sypid in $BARE_PIDS; do symptom_fds "$_sypid"; done
  symptom_containers
  journal_bin || return 0
  _syifs=$IFS
  IFS=$NL
  for _syu in $UNITS; do
    [ -n "$_syu" ] || continue
    run "$_syjc" -u "$_syu" -n "$SYMPTOM_SCAN" --no-pager -o short-iso
    [ "$_rc" -eq 0 ] || continue
    symptom_lines unit "$_syu" "$_out"
  done
  IFS=$_syifs
}

# ---- main ------------------------------------------------------------------------------
rec begin "$DT_VERSION" "$R"
if [ -n "$R" ] && [ ! -d "$R/" ]; then
  rec error root "$R is not a directory"
  exit 3
fi
if [ "${DT_ONLY:-}" = gpus ]; then
  # the live GPU state alone (a refresh of "GPUs now"): the nvidia-smi part, same trust rule;
  # with the helper, its two calls start together and nothing else is a process of its own
  if hx_boot; then
    hx id
    MYUID=${_ho#uid=}
    MYUID=${MYUID%%(*}
  else
    MYUID=$(deadline id -u 2>/dev/null)
  fi
  step gpus
  smi_job
  step end
  rec end ""
  exit 0
fi
hx_boot || pick_tmpdir
if hxon; then
  # nvidia-smi (NVML's start-up) first: its trust check needs only the probing user's uid
  hx id
  _id=${_ho#uid=}
  _id=${_id%%(*}
  case $_id in '' | *[!0-9]*) ;; *)
    MYUID=$_id
    start_smi
    ;;
  esac
fi
step host
probe_host
[ -n "$SMI_PID" ] || start_smi
py_prefetch
step driver
probe_container
probe_libcuda
step "ssh session"
ctx_ssh
step "login shell"
ctx_login
step processes
discover_processes
py_prefetch go
journal_prefetch
ldcache_prefetch
finish_login
tk_prefetch
probe_pythons
step toolkits
probe_toolkits
probe_changes
probe_symptoms
step gpus
finish_smi
_el=
if [ -n "$T0" ] && read -r _t1 _ </proc/uptime 2>/dev/null; then
  _el=$(((${_t1%.*}${_t1#*.} - ${T0%.*}${T0#*.}) * 10))
fi
step end
rec end "$_el"
exit 0
