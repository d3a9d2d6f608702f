"""What the probe's tools would print, read in-process by the host helper (hosthelper.py, which
carries this module's body inside its one program: probes.helper_program). Each op takes the
request's fields and returns (output, status) as the tool's ``$(…)`` gives them.
Standard library only, Python 3.8+."""

import contextlib
import os
import pwd
import stat


def strip_nl(data):
    """What a sh command substitution keeps: trailing newlines cut."""
    return data.rstrip(b"\n")


def readf(path, limit=None):
    with open(path, "rb") as f:
        return f.read() if limit is None else f.read(limit)


def op_readlink(path):
    return strip_nl(os.fsencode(os.readlink(path))), 0


def op_realpath(path):
    return os.fsencode(os.path.realpath(path)), 0


def mode_text(st, path):
    """The mode as ls prints it, with ``+`` for an access control list (access or default)."""
    text = stat.filemode(st.st_mode)
    acls = {"system.posix_acl_access", "system.posix_acl_default"}
    with contextlib.suppress(OSError):
        if not stat.S_ISLNK(st.st_mode) and acls & set(os.listxattr(path)):
            text += "+"
    return text


def op_lsldn(*paths):
    """``ls -ldn -- PATHS``: mode, links, uid, gid, size, date, name; sorted as in the C
    locale; status 2 when one cannot be listed."""
    lines, status = [], 0
    for p in sorted(set(paths), key=os.fsencode):
        try:
            st = os.lstat(p)
        except OSError:
            status = 2
            continue
        name = p + (" -> " + os.readlink(p) if stat.S_ISLNK(st.st_mode) else "")
        lines.append(
            f"{mode_text(st, p)} {st.st_nlink} {st.st_uid} {st.st_gid} {st.st_size} Jan 1 00:00 "
            f"{name}"
        )
    return os.fsencode("\n".join(lines)), status


def op_od(limit, path):
    """``od -A n -t o1 -v -N LIMIT <PATH``: 16 octal bytes a line."""
    data = readf(path, int(limit))
    rows = ["".join(f" {b:03o}" for b in data[i : i + 16]) for i in range(0, len(data), 16)]
    return "\n".join(rows).encode(), 0


def op_nul2nl(path):
    return strip_nl(readf(path).replace(b"\0", b"\n")), 0


def op_cat(path):
    return strip_nl(readf(path)), 0


def lines_of(data):
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


def op_grepl(pattern, *paths):
    """``grep -l -a -E PATTERN PATHS``: the files holding a match."""
    import re  # here, not at start-up: its import costs as much as the rest (prefetched)

    rx, hits = re.compile(os.fsencode(pattern)), []
    for p in paths:
        try:
            if rx.search(readf(p)):
                hits.append(os.fsencode(p))
        except OSError:
            pass
    return b"\n".join(hits), 0 if hits else 1


def op_grepx(line, *paths):
    """``grep -l -x LINE PATHS`` for a LINE without pattern characters."""
    want, hits = os.fsencode(line), []
    for p in paths:
        try:
            if want in lines_of(readf(p)):
                hits.append(os.fsencode(p))
        except OSError:
            pass
    return b"\n".join(hits), 0 if hits else 1


ELF_CAP = 8 << 20  # the most bytes of one ELF section read


def elf_section(path, name):
    """The bytes of section NAME (at most ELF_CAP) of a 64-bit little-endian ELF file, read
    through its section headers; b"" for any other file, a missing section or a bad header."""
    import struct

    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:6] != b"\x7fELF\x02\x01":
            return b""
        (shoff,) = struct.unpack_from("<Q", head, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 58)
        if shentsize != 64 or not 0 < shnum <= 4096 or shstrndx >= shnum:
            return b""
        f.seek(shoff)
        table = f.read(shnum * 64)
        if len(table) < shnum * 64:
            return b""
        heads = [struct.unpack_from("<IIQQQQ", table, i * 64) for i in range(shnum)]
        names_at, names_size = heads[shstrndx][4], heads[shstrndx][5]
        f.seek(names_at)
        names = f.read(min(names_size, 1 << 20))
        want = os.fsencode(name) + b"\0"
        for sh_name, _, _, _, offset, size in heads:
            if names[sh_name : sh_name + len(want)] == want:
                f.seek(offset)
                return f.read(min(size, ELF_CAP))
    return b""


def op_grepo(pattern, path, first="", section=""):
    """``grep -a -o [-m 1] -E PATTERN PATH``: each match (of the first matching line only);
    with SECTION, in that section of a 64-bit little-endian ELF file only (elf_section)."""
    import re

    rx, found = re.compile(os.fsencode(pattern)), []
    data = elf_section(path, section) if section else readf(path)
    if first:
        m = rx.search(data)
        if m:
            start = data.rfind(b"\n", 0, m.start()) + 1
            end = data.find(b"\n", m.end())
            found = rx.findall(data[start : end if end >= 0 else len(data)])
    else:
        found = [m.group(0) for ln in lines_of(data) for m in rx.finditer(ln)]
    return b"\n".join(found), 0 if found else 1


def op_greplines(pattern, path, first=""):
    """``grep [-m 1] -E PATTERN PATH``: the matching lines."""
    import re

    rx = re.compile(os.fsencode(pattern))
    found = [ln for ln in lines_of(readf(path)) if rx.search(ln)]
    found = found[:1] if first else found
    return b"\n".join(found), 0 if found else 1


def op_tailc(count, path):
    with open(path, "rb") as f:
        f.seek(0, 2)
        f.seek(max(f.tell() - int(count), 0))
        return strip_nl(f.read()), 0


def op_tailn(count, path):
    data = readf(path)
    return strip_nl(b"\n".join(lines_of(data)[-int(count) :])), 0


def op_stat(*paths):
    """``stat -c '%Y %n' PATHS`` (the lines of those it can stat)."""
    lines, status = [], 0
    for p in paths:
        try:
            lines.append(b"%d %s" % (int(os.stat(p).st_mtime), os.fsencode(p)))
        except OSError:
            status = 1
    return b"\n".join(lines), status


def op_passwd(uid):
    """``getent passwd UID | head -n 1``."""
    try:
        e = pwd.getpwuid(int(uid))
    except (KeyError, ValueError):
        return b"", 2
    fields = (e.pw_name, e.pw_passwd, e.pw_uid, e.pw_gid, e.pw_gecos, e.pw_dir, e.pw_shell)
    return os.fsencode(":".join(map(str, fields))), 0


def op_uname(which):
    u = os.uname()
    return os.fsencode(u.nodename if which == "n" else f"{u.release} {u.machine}"), 0


def op_id(which=""):
    uid = os.geteuid()
    if which == "u":
        return b"%d" % uid, 0
    try:
        name = f"({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        name = ""
    return os.fsencode(f"uid={uid}{name} gid={os.getegid()}"), 0


def op_env():
    return b"\n".join(k + b"=" + v for k, v in os.environb.items()), 0
