"""Where the remote command begins in an OpenSSH client command line (``ssh [opts] dest cmd…``).

ssh does not pass its command words on as arguments: it joins them with spaces into one string
and the remote login shell splits that again (``sshd`` runs ``$SHELL -c "<string>"``). So a
word meant to reach a remote program as *one* argument — the script after ``sh -c`` — must be
shell-quoted, while the first word of the command is itself a command line the remote shell
runs. Which word is first is found as ssh finds it: options by OpenSSH's ``getopt`` string,
then the destination, then — as ``ssh.c`` does — the options after the destination, up to the
first word that is not one (``--`` ends options and is dropped).

The letters that take a value, from OpenSSH's getopt string: ``1246ab:c:e:fgi:kl:m:no:p:qstvx
AB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy`` in ``ssh.c`` since 9.4 (``-P tag``); the 9.2p1
client here has ``P`` without a value (an unused flag), the rest the same (its binary's
strings). A letter taking a value takes the rest of its word or the next word.
"""

from __future__ import annotations

from collections.abc import Sequence

TAKES_VALUE = frozenset("bceilmopBDEFIJLOPQRSWw")


def _after_options(argv: Sequence[str], i: int) -> tuple[int, bool]:
    """The index of the first word at or after ``i`` that is not an option, and whether a
    ``--`` ended the options (POSIX getopt: no permutation, ``-`` alone is not an option)."""
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1, True
        if not word.startswith("-") or word == "-":
            return i, False
        i += 1
        for at, letter in enumerate(word[1:], 2):
            if letter in TAKES_VALUE:
                if at == len(word):  # the value is the next word
                    i += 1
                break
    return i, False


def remote_command_start(argv: Sequence[str]) -> int | None:
    """The index in ``argv`` (``argv[0]`` is the ssh program) of the remote command's first
    word; ``None`` when there is no destination. ``len(argv)`` when there is no command."""
    i, ended = _after_options(argv, 1)
    if i >= len(argv):
        return None
    i += 1  # the destination
    if not ended:
        i, _ = _after_options(argv, i)
    return i
