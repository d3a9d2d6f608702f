"""The probe's host helper: one trusted host Python that does, in-process, what probe.sh would
start a process for (readlink, ls -ldn, od, tr, grep, head, tail, wc, stat, cat, uname, id,
getent, env, mktemp, rm), and starts the few programs that must run (nvidia-smi, nvcc, the login
shell, journalctl, the inspected interpreters with pyfacts.py) itself, each with its own
deadline and process group: no `timeout` or `setsid` process (`setpriv` only before 3.9).

probe.sh starts it once (``DT_PROBE_PATH`` ``auto`` or ``py``: probes/README.md) as
``python3 -E -S -c SOURCE PID STEP_TIMEOUT`` with pyfacts.py on stdin. It picks the probe's temp
dir the way pick_tmpdir does, makes one request and one reply FIFO per channel there (0: the
probe, 1: its nvidia-smi job, 2: its login-shell job), prints a sh snippet for the probe to eval
and serves in the background until the probe's ``quit`` (or the probe is gone). A request is one
line of tab-separated fields, each escaped as a record field; a reply is a sh snippet setting
``_ho`` (output), ``_hx`` (extra) and ``_hr`` (status), read by the probe with ``.``.
``pre OP ARG…`` starts answering ``OP ARG…`` now and keeps the answer for that request, made
later (start_early).
The probe keeps every decision: the helper only answers what a tool would have printed.
Standard library only, Python 3.8+.
"""

import contextlib
import os
import select
import signal
import sys
import threading
import time

from hostread import (  # probes.helper_program puts hostread.py's body here
    op_cat,
    op_env,
    op_grepl,
    op_greplines,
    op_grepo,
    op_grepx,
    op_id,
    op_lsldn,
    op_nul2nl,
    op_od,
    op_passwd,
    op_readlink,
    op_realpath,
    op_stat,
    op_tailc,
    op_tailn,
    op_uname,
    strip_nl,
)

STEP = 10
PYFACTS = b""
LIVE = set()  # process groups started and not yet ended: ended with the helper
EVENTS = None  # the guardian's pipe: "+PID" / "-PID" as a program starts / ends
RESCUE = b"HXD= _ho= _hx= _hr=125\n"  # to a shell left waiting: no answer, the sh path from now
SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGTERM)


def sq(data):
    """Bytes as one single-quoted sh word (NUL bytes dropped: a shell cannot hold them)."""
    return b"'" + data.replace(b"\0", b"").replace(b"'", b"'\\''") + b"'"


def unesc(field):
    """A request field as the probe's esc wrote it: ``\\\\`` a backslash, ``\\ooo`` a byte."""
    out, i = bytearray(), 0
    while i < len(field):
        c = field[i]
        if c == 0x5C and field[i + 1 : i + 2] == b"\\":
            out.append(0x5C)
            i += 2
        elif c == 0x5C and len(field) >= i + 4 and all(48 <= d <= 55 for d in field[i + 1 : i + 4]):
            out.append(int(field[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(c)
            i += 1
    return bytes(out)


# ---- programs that must run ----------------------------------------------------------------
def spawn(argv, *, stdin=None, env=None, ids=None, cap=None, on_start=None):
    """Run argv like ``timeout -k 2 STEP argv </dev/null 2>&1``: in a process group of its own,
    TERM to the group at the deadline, KILL 2 s later; (output, status, bytes beyond cap).
    With ids (uid, gid), as that user with no supplementary groups (setpriv before 3.9).
    No preexec_fn: it is not safe in a process with threads."""
    import subprocess  # here, not at start-up: ~20 ms before the probe may go on (prefetched)

    drop = {}
    if ids and sys.version_info >= (3, 9):
        drop = {"user": ids[0], "group": ids[1], "extra_groups": []}
    elif ids:
        argv = ["setpriv", f"--reuid={ids[0]}", f"--regid={ids[1]}", "--clear-groups", "--", *argv]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            **drop,
        )
    except OSError as exc:
        if exc.errno == 8 and not ids:  # no #! line: execvp's fallback, as timeout(1) has it
            return spawn(["/bin/sh", *argv], stdin=stdin, env=env, cap=cap, on_start=on_start)
        return b"", 126 if exc.errno == 13 else 127, 0
    LIVE.add(proc.pid)
    tell(b"+%d\n" % proc.pid)
    if on_start:
        on_start(proc.pid)
    chunks, size, beyond = [], 0, 0
    done = threading.Event()

    def reader():
        nonlocal size, beyond
        while True:
            block = proc.stdout.read1(65536)
            if not block:
                break
            if cap is None or size + len(block) <= cap:
                chunks.append(block)
                size += len(block)
            else:
                keep = max(cap - size, 0)
                chunks.append(block[:keep])
                size += keep
                beyond += len(block) - keep
        done.set()

    def writer():  # apart, so a program that never reads its stdin still meets its deadline
        with contextlib.suppress(OSError):
            proc.stdin.write(stdin)
            proc.stdin.close()

    threading.Thread(target=reader, daemon=True).start()
    if stdin is not None:
        threading.Thread(target=writer, daemon=True).start()
    # the end of its output first (an event, no polling), then its status: Popen.wait with a
    # timeout polls, sleeping up to 50 ms a turn
    start = time.monotonic()
    done.wait(STEP)
    status = None
    try:
        status = proc.wait(max(STEP - (time.monotonic() - start), 0.001))
    except subprocess.TimeoutExpired:
        group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(2)
            status = 124
        except subprocess.TimeoutExpired:
            group(proc.pid, signal.SIGKILL)
            proc.wait()
            status = 137
    LIVE.discard(proc.pid)
    tell(b"-%d\n" % proc.pid)
    done.wait(2 if status in (124, 137) else STEP)
    if status < 0:
        status = 128 - status
    return b"".join(chunks), status, beyond


def tell(event):
    if EVENTS is not None:
        with contextlib.suppress(OSError):
            os.write(EVENTS, event)


def group(pid, sig):
    with contextlib.suppress(OSError):
        os.killpg(pid, sig)


def op_run(*argv):
    """``timeout -k 2 STEP ARGV 2>&1 </dev/null``."""
    out, status, _ = spawn(list(argv))
    return strip_nl(out), status


def op_cap(cap, *argv):
    """run_cap's pipeline: the first CAP bytes as they are, the count of the rest in _hx."""
    out, status, beyond = spawn(list(argv), cap=int(cap))
    return out, status, b"%d" % beyond


def op_cap2(cap, count, *argvs):
    """Two run_cap pipelines started together (nvidia-smi's table and its --query-gpu call),
    each with its own deadline and cap: the first COUNT words are one program, the rest the
    other. The first's answer in _ho/_hx/_hr, the second's in _h2o/_h2x/_h2r."""
    split = int(count)
    second = []
    t = threading.Thread(
        target=lambda: second.append(spawn(list(argvs[split:]), cap=int(cap))), daemon=True
    )
    t.start()
    out, status, beyond = spawn(list(argvs[:split]), cap=int(cap))
    t.join()
    out2, status2, beyond2 = second[0] if second else (b"", 125, 0)
    more = b" _h2o=%s _h2x='%d' _h2r=%d" % (sq(out2), beyond2, status2)
    return out, status, b"%d" % beyond, more


def op_pyfacts(index, python, uid, gid, *assignments):
    """pyfacts.py on the interpreter's stdin (``PYTHON -E -S - INDEX``) with the DT_* values
    given, as the serving process's owner when uid/gid are set."""
    env = dict(os.environb)
    for kv in assignments:
        k, _, v = os.fsencode(kv).partition(b"=")
        env[k] = v
    ids = (int(uid), int(gid)) if uid and gid else None
    out, status, _ = spawn([python, "-E", "-S", "-", index], stdin=PYFACTS, env=env, ids=ids)
    return strip_nl(out), status


def op_login(shell, flag, pidfile=""):
    """The login shell's environment (login_job): ``SHELL FLAG 'echo __DT_LOGIN_ENV__; exec
    env'`` in a session of its own; its session id goes to PIDFILE for the probe's kill path."""

    def started(pid):
        if pidfile:
            with open(pidfile, "w") as f:
                f.write(f"{pid}\n")

    env = dict(os.environb)
    env[b"HISTFILE"] = b"/dev/null"
    argv = [shell, flag, "echo __DT_LOGIN_ENV__; exec env"]
    out, status, _ = spawn(argv, env=env, on_start=started)
    return strip_nl(out), status


OPS = {
    "readlink": op_readlink,
    "realpath": op_realpath,
    "lsldn": op_lsldn,
    "od": op_od,
    "nul2nl": op_nul2nl,
    "cat": op_cat,
    "grepl": op_grepl,
    "grepx": op_grepx,
    "grepo": op_grepo,
    "greplines": op_greplines,
    "tailc": op_tailc,
    "tailn": op_tailn,
    "stat": op_stat,
    "passwd": op_passwd,
    "uname": op_uname,
    "id": op_id,
    "env": op_env,
    "run": op_run,
    "cap": op_cap,
    "cap2": op_cap2,
    "pyfacts": op_pyfacts,
    "login": op_login,
}
PROGRAM_OPS = {"run", "cap", "cap2", "pyfacts", "login"}


def answer(fields):
    """One request's reply snippet. In-process reads get the step deadline too (a wedged
    driver can block a read of its /proc file): status 124 when one does not end in time."""
    name, args = fields[0].decode(), [os.fsdecode(f) for f in fields[1:]]
    result = []

    def work():
        try:
            result.append(OPS[name](*args))
        except Exception:  # a tool that fails prints nothing and fails: so does its op
            result.append((b"", 1))

    if name in PROGRAM_OPS:
        work()  # spawn keeps its own deadline
    else:
        t = threading.Thread(target=work, daemon=True)
        t.start()
        t.join(STEP)
    out, status, extra, more = (result[0] + (b"", b""))[:4] if result else (b"", 124, b"", b"")
    return b"_ho=%s _hx=%s _hr=%d%s\n" % (sq(out), sq(extra), status, more)


EARLY = {}  # request fields → the thread answering it, started by a ``pre`` request
EARLY_LOCK = threading.Lock()
PENDING = []  # early pyfacts requests, held until ``prego`` or a claim (start_pending)


def start_early(fields):
    """``pre OP ARG…``: start answering ``OP ARG…`` now, in a thread of its own, for the probe
    to take when it makes exactly that request (claim); the same request twice starts once.
    A pyfacts request waits in PENDING, to share one run with the others of its interpreter."""
    key = tuple(fields)
    with EARLY_LOCK:
        if key in EARLY or fields in PENDING:
            return
        if fields[0] == b"pyfacts":
            PENDING.append(fields)
            return
        result = []
        t = threading.Thread(target=lambda: result.append(answer(fields)), daemon=True)
        EARLY[key] = (t, result)
    t.start()


def start_pending():
    """The pyfacts requests held (``prego``: the probe knows its serving processes): one run
    per interpreter, user and DT_READ_FOR, answering each of its requests (op_pyviews)."""
    groups = {}
    with EARLY_LOCK:
        for fields in PENDING:
            groups.setdefault(tuple(fields[2:6]), []).append(fields)
        PENDING.clear()
        starts = []
        for views in groups.values():
            results = [[] for _ in views]
            starts.append(threading.Thread(target=op_pyviews, args=(views, results), daemon=True))
            for i, fields in enumerate(views):
                EARLY[tuple(fields)] = (starts[-1], results[i])
    for t in starts:
        t.start()


def op_pyviews(requests, results):
    """pyfacts requests of one interpreter and user (``pyfacts INDEX PYTHON UID GID DT_…=V…``)
    in one run (argv ``views``), each on its DT_* values (DT_VIEWS, hex), each answer ended by
    a line no record can forge (DT_VIEW_MARK, random)."""
    mark = b"@@DT1\tview\t" + os.urandom(8).hex().encode()
    views = b";".join(
        r[1] + b":" + b",".join(kv.partition(b"=")[0] + b"=" + kv.partition(b"=")[2].hex().encode()
                                for kv in r[5:])
        for r in requests
    )  # fmt: skip
    env = {**os.environb, b"DT_VIEWS": views, b"DT_VIEW_MARK": mark}
    _, index, python, uid, gid = (os.fsdecode(f) for f in requests[0][:5])
    ids = (int(uid), int(gid)) if uid and gid else None
    out, status, _ = spawn([python, "-E", "-S", "-", index, "views"], stdin=PYFACTS, env=env,
                           ids=ids)  # fmt: skip
    parts = (out + b"\n").split(b"\n" + mark + b"\n")
    for i, result in enumerate(results):
        text = strip_nl(parts[i]) if i < len(parts) else b""
        result.append(b"_ho=%s _hx='' _hr=%d\n" % (sq(text), status))


def claim(fields):
    """The answer of a request started early with exactly these fields, once (None: none was)."""
    if PENDING and fields[0] == b"pyfacts":
        start_pending()
    with EARLY_LOCK:
        early = EARLY.pop(tuple(fields), None)
    if early is None:
        return None
    early[0].join()
    return early[1][0] if early[1] else b"_ho='' _hx='' _hr=125\n"


def serve(fifo_dir, channel, quit_event, dying, busy):
    """Answer one channel's requests in turn. Once the probe is gone (dying), what is left of
    its jobs gets ``exit 125`` for an answer, so none waits on a FIFO for ever."""
    req = os.path.join(fifo_dir, f"req.{channel}")
    rep = os.path.join(fifo_dir, f"rep.{channel}")
    while not quit_event.is_set():
        with open(req, "rb") as f:
            line = f.read()
        if not line:
            continue
        busy.add(channel)
        fields = line.rstrip(b"\n").split(b"\t")
        try:
            if dying.is_set():
                reply = b"exit 125\n"
            elif fields[0] == b"quit":
                reply = b"_ho='' _hx='' _hr=0\n"
            elif fields[0] == b"pre":
                start_early([unesc(x) for x in fields[1:]])
                reply = b"_ho='' _hx='' _hr=0\n"
            elif fields[0] == b"prego":
                start_pending()
                reply = b"_ho='' _hx='' _hr=0\n"
            else:
                request = [unesc(x) for x in fields]
                reply = claim(request) or answer(request)
        except Exception:  # never a channel left without an answer
            reply = b"_ho='' _hx='' _hr=125\n"
        try:
            with open(rep, "wb") as f:
                if fields[0] == b"quit":
                    remove_tree(fifo_dir)  # gone before the probe's last line: its end is ours
                f.write(reply)
        except OSError:
            pass
        busy.discard(channel)
        if fields[0] == b"quit":
            quit_event.set()


def drain(fifo):
    """Read and drop what a reply FIFO holds, so an answer to a shell that is gone is written."""
    try:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    with contextlib.suppress(OSError):
        while os.read(fd, 65536):
            pass
    os.close(fd)


def guard(fifo_dir, helper, events):
    """The helper's guardian (a fork of it, no exec): should the helper die before its end (a
    SIGKILL), it ends the programs the helper had running, and answers each shell still waiting
    on a FIFO with RESCUE, so none waits for ever and the probe goes on by the sh path."""
    live, buf = set(), b""
    while os.getppid() == helper:
        ready = select.select([events], [], [], 0.2)[0]
        data = os.read(events, 65536) if ready else b""
        if ready and not data:
            break  # the helper is gone
        buf += data
        *lines, buf = buf.split(b"\n")
        for ln in lines:
            (live.add if ln[:1] == b"+" else live.discard)(int(ln[1:]))
    if not os.path.isdir(fifo_dir):
        os._exit(0)  # it ended as it should: nothing is left
    for pid in live:
        group(pid, signal.SIGKILL)
    # a shell writing a request gets through (held open for the while, so none gets a SIGPIPE);
    # one waiting for an answer gets RESCUE. A shell asks no more once the helper is gone (hxon).
    reqs = []
    for ch in range(3):
        with contextlib.suppress(OSError):
            reqs.append(os.open(f"{fifo_dir}/req.{ch}", os.O_RDONLY | os.O_NONBLOCK))
    end = time.monotonic() + 2
    while time.monotonic() < end:
        for fd in reqs:
            with contextlib.suppress(OSError):
                os.read(fd, 65536)
        for ch in range(3):
            with contextlib.suppress(OSError):
                fd = os.open(f"{fifo_dir}/rep.{ch}", os.O_WRONLY | os.O_NONBLOCK)
                with contextlib.suppress(OSError):
                    os.write(fd, RESCUE)
                os.close(fd)
        time.sleep(0.05)
    os._exit(0)


# ---- start-up: the temp dir pick_tmpdir would choose, the FIFOs, then the background --------
def own_tag():
    """What a temp dir's ``probe`` file says: made by detective-tui in this PID namespace."""
    try:
        return "detective-tui " + os.readlink("/proc/self/ns/pid")
    except OSError:
        return "detective-tui"


def own_gone(path, tag):
    """A detective-tui.PID.XXXXXX dir of ours, made in this PID namespace (``tag``), whose
    probe is gone (sweep_tmp): a pid in another namespace cannot be seen from this one."""
    parts = os.path.basename(path).split(".")
    if len(parts) != 3 or not parts[1].isdigit() or len(parts[2]) != 6:
        return False
    try:
        if os.lstat(path).st_uid != os.geteuid() or not os.path.isdir(path):
            return False
        with open(path + "/probe") as f:
            if f.readline() != tag + "\n":
                return False
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def remove_tree(path):
    for top, dirs, files in os.walk(path, topdown=False):
        for name in files + dirs:
            p = os.path.join(top, name)
            with contextlib.suppress(OSError):
                os.rmdir(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def pick_dir(pid):
    """pick_tmpdir's choice: (dir, notes); dir None when none holds data."""
    notes, seen = [], set()
    tag = own_tag()
    env = os.environ
    bases = (env.get("TMPDIR", ""), "/tmp", "/var/tmp", "/dev/shm", env.get("HOME", ""))
    for base in bases:
        base = base.rstrip("/") if base != "/" else ""
        if not base.startswith("/") or len(base) < 2 or base in seen:
            continue
        seen.add(base)
        if not os.path.isdir(base) or not os.access(base, os.W_OK):
            continue
        try:
            for name in os.listdir(base):
                if name.startswith("detective-tui.") and own_gone(os.path.join(base, name), tag):
                    remove_tree(os.path.join(base, name))
        except OSError:
            pass
        path = None
        for _ in range(20):
            letters = os.urandom(6)
            abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
            tail = "".join(abc[b % len(abc)] for b in letters)
            try:
                path = f"{base}/detective-tui.{pid}.{tail}"
                os.mkdir(path, 0o700)
                break
            except FileExistsError:
                path = None
            except OSError:
                path = None
                break
        if path is None:
            notes.append(f"{base} cannot hold data (full?)")
            continue
        try:
            with open(path + "/probe", "w") as f:
                f.write(tag + "\n")
            with open(path + "/probe") as f:
                if f.readline() == tag + "\n":
                    return path, notes
        except OSError:
            pass
        remove_tree(path)
        notes.append(f"{base} cannot hold data (full?)")
    return None, notes


def main():
    global STEP, PYFACTS, EVENTS
    if sys.version_info < (3, 8):  # noqa: UP036 - a host's python3 may be older than ours
        return 1
    pid, STEP = sys.argv[1], int(sys.argv[2])
    PYFACTS = sys.stdin.buffer.read()
    fifo_dir, notes = pick_dir(pid)
    if fifo_dir is None:
        return 1
    try:
        for ch in range(3):
            os.mkfifo(f"{fifo_dir}/req.{ch}", 0o600)
            os.mkfifo(f"{fifo_dir}/rep.{ch}", 0o600)
    except OSError:
        remove_tree(fifo_dir)
        return 1
    snippet = b"HXD=%s\n" % sq(os.fsencode(fifo_dir))
    snippet += b"".join(b'HXNOTES="$HXNOTES"%s"$NL"\n' % sq(os.fsencode(n)) for n in notes)
    child = os.fork()
    if child:
        sys.stdout.buffer.write(snippet + b"HXPID=%d\n" % child)
        sys.stdout.flush()
        os._exit(0)
    # the probe's signals (its group's) leave the helper to end what it started, below; caught,
    # not ignored, so the programs it starts get the default action back
    for sig in SIGNALS:
        signal.signal(sig, lambda *_: None)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    events, EVENTS = os.pipe()
    if os.fork() == 0:
        os.close(EVENTS)
        guard(fifo_dir, os.getppid(), events)
    os.close(events)
    for name in ("subprocess", "re"):  # for the programs and the greps, while the probe goes on
        threading.Thread(target=__import__, args=(name,), daemon=True).start()
    quit_event, dying, busy = threading.Event(), threading.Event(), set()
    for ch in (1, 2):
        args = (fifo_dir, ch, quit_event, dying, busy)
        threading.Thread(target=serve, args=args, daemon=True).start()
    probe = int(pid)
    watch = threading.Thread(target=serve, args=(fifo_dir, 0, quit_event, dying, busy))
    watch.daemon = True
    watch.start()
    while not quit_event.is_set():
        watch.join(0.2)
        try:
            os.kill(probe, 0)
        except ProcessLookupError:
            break
        except OSError:
            pass
    # the probe is gone (or done): end what runs, let its answers reach the jobs that wait
    dying.set()
    for pid in list(LIVE):
        group(pid, signal.SIGTERM)
    started = time.monotonic()
    while (busy or LIVE) and time.monotonic() - started < STEP + 3:
        if time.monotonic() - started > 1:
            for pid in list(LIVE):
                group(pid, signal.SIGKILL)  # an interactive login shell ignores TERM
            for ch in list(busy):
                drain(f"{fifo_dir}/rep.{ch}")  # an answer no one reads: the probe that asked
        watch.join(0.05)
    remove_tree(fifo_dir)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
