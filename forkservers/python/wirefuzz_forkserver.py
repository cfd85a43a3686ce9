"""A fork server for Python MCP servers over stdio: imports the SDK once, then forks a fresh server per connection.

A Python SDK server spends over a second importing its SDK before it reads its first line, so a harness that starts
one process per conversation mostly measures imports. This script pays that once: it imports the modules given with
`--preload` (and anything they import), listens on a Unix socket, and for every client forks a child that runs the
server script as `__main__` with the client's stdin, stdout and stderr. Each child is a fresh process as far as the
conversation can tell (its own connection state, its own event loop), started in milliseconds.

mcp-wirefuzz starts it by itself for a server command that is a Python program (`--preload-imports`, on a private
socket), and stands `mcp-wirefuzz attach SOCKET` in for the server per conversation. By hand:

    .venv/bin/python forkservers/python/wirefuzz_forkserver.py --socket /tmp/calc.sock \\
        --preload mcp.server.mcpserver tests/servers/calc.py &
    mcp-wirefuzz fuzz --jobs 2 -- mcp-wirefuzz attach /tmp/calc.sock

The program is a script (run as `runpy.run_path`) or, with `--module`, a module (`python -m MODULE`:
`runpy.run_module`). `--preload-imports` preloads what the program imports outside its functions and classes (read
with `ast`, nothing of it run), the Python MCP SDKs installed (`mcp`, `fastmcp`), and what a trial run of the
program imported (forked, on a short MCP conversation); an import that fails is left out, and so is one that starts
a thread or writes to stdout (the fork server starts over without it, `--skip-preload`).

The wire protocol on the socket, per connection: the client sends one byte `F` carrying its fds 0, 1 and 2
(SCM_RIGHTS); the server forks a child on them and, when the child ends, writes one line `exit N` or `signal N`
and closes the connection. If the client goes away first, the child is killed (SIGKILL): a harness that gives up on
a hung server kills the stub, and the server it stood for goes with it.

Standard library only (Python 3.9+), single-threaded: one select loop over the listening socket, the client
connections and a wake-up pipe written on SIGCHLD. Forking from a process with threads is unsafe, and a plain
process would put what a module prints at import on the wire, so a module named with `--preload` that starts a
thread or writes to stdout stops the fork server (exit 3, its last stderr line `wirefuzz-forkserver: not
fork-safe: ...`). Once the preloads are imported it says so (`wirefuzz-forkserver: preloaded: ...`) before it
listens.
"""

import argparse
import ast
import atexit
import ctypes
import errno
import importlib
import importlib.util
import io
import json
import os
import runpy
import select
import selectors
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback

#: The byte a client sends with its three file descriptors.
HELLO = b"F"

#: The Python MCP SDKs, preloaded with `--preload-imports` when installed (a program may import them only once it
#: runs, behind a function).
SDKS = ("mcp", "fastmcp")

#: The exit code of a fork server whose preloads are not fork-safe.
NOT_FORK_SAFE = 3

#: How long the trial run of a program may take before it is killed and nothing it imports is preloaded.
TRIAL_SECONDS = 15

#: What the trial run of a program reads, then the end of its input: a short MCP conversation (a handshake, the
#: lists, a call of a tool no server has), so that what serving a request imports is preloaded too, not only what
#: starting up imports (FastMCP imports most of what it serves with at the first request).
TRIAL_INPUT = "".join(
    json.dumps(message) + "\n"
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "wirefuzz-forkserver", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "wirefuzz-trial", "arguments": {}}},
    )
).encode()

#: How many modules a fork server leaves out of `--preload-imports`, starting over each time, before it gives up.
RESTARTS = 8

#: How many times a fork is tried while the system is out of processes or memory, waiting 10 ms, then twice as
#: long each time (about 2.5 s in all).
FORK_ATTEMPTS = 9


def die_with_parent():
    """In a forked child: get SIGKILL when the fork server dies (Linux's parent-death signal; the fork server itself
    dies with the harness), so a harness killed with kill -9 leaves no server behind. Best effort where libc or
    prctl is missing."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def kill(pid):
    """SIGKILL to a forked child, if it is still there."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def fork_with_retries():
    """os.fork(), tried again while it fails with EAGAIN or ENOMEM (a passing shortage); raises OSError past that."""
    delay = 0.01
    for attempt in range(FORK_ATTEMPTS):
        try:
            return os.fork()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ENOMEM) or attempt == FORK_ATTEMPTS - 1:
                raise
            time.sleep(delay)
            delay *= 2


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True, help="the Unix socket path to listen on (replaced if present)")
    parser.add_argument(
        "--preload",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module to import before forking (repeatable), e.g. mcp.server.mcpserver",
    )
    parser.add_argument(
        "--preload-imports",
        action="store_true",
        help="also preload what the program imports at top level, the MCP SDKs installed (%s) and what a trial run "
        "of the program (a short MCP conversation) imports" % ", ".join(SDKS),
    )
    parser.add_argument(
        "--skip-preload",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module --preload-imports leaves to each server (the fork server adds one when it restarts)",
    )
    parser.add_argument(
        "--module", action="store_true", help="the program is a module to run as `python -m` does, not a script"
    )
    parser.add_argument("script", help="the server script (or, with --module, module), run as __main__ in each child")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser.parse_args(argv)


class Unfit(Exception):
    """An import that left the process unfit to fork a plain process's lookalike from: `module` started a thread or
    wrote to stdout."""

    def __init__(self, module, why):
        super().__init__("%s %s" % (module, why))
        self.module, self.why = module, why


def thread_count():
    """The threads of this process, as the kernel counts them (a C extension's threads too)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def top_level_imports(path, package):
    """The modules a Python file imports outside its functions and classes, in the file's order: `import a.b` gives
    a.b; `from a import b` gives a, then a.b (imported only where it is a submodule). Relative imports are resolved
    against `package` (left out without one). Nothing of the file runs."""
    with open(path, "rb") as source:
        tree = ast.parse(source.read(), path)
    names = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                names.extend(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module
                if child.level:
                    try:
                        base = importlib.util.resolve_name("." * child.level + (child.module or ""), package)
                    except (ImportError, ValueError):
                        continue  # no package to resolve it against: a script's relative import fails anyway
                names.append(base)
                names.extend("%s.%s" % (base, alias.name) for alias in child.names if alias.name != "*")
            else:
                visit(child)

    visit(tree)
    return names


class Preloads:
    """Imports before forking, each checked to leave the process fit to fork a plain process's lookalike from: no
    thread started, nothing written to stdout (caught in a file meanwhile; a plain process writes it to the wire).
    Modules in `skipped` are left to each server."""

    def __init__(self, stdout, skipped):
        self.stdout = stdout
        self.skipped = set(skipped)
        self.threads = thread_count()

    def attempt(self, module, action, optional=True):
        """Runs `action` (an import of `module`, or a look-up that imports its parents): its result, or None when it
        raised and is `optional` (it raises otherwise). Raises Unfit when it left the process unfit to fork."""
        try:
            return action()
        except (Exception, SystemExit):
            if not optional:
                raise
            return None
        finally:
            sys.stdout.flush()
            if thread_count() > self.threads:
                raise Unfit(module, "started a thread")
            if os.fstat(self.stdout.fileno()).st_size:
                raise Unfit(module, "wrote to stdout")

    def skips(self, module):
        """Whether `module` is left to each server: it, or a package it is in, is skipped (importing a submodule
        imports its packages first)."""
        parts = module.split(".")
        return any(".".join(parts[:end]) in self.skipped for end in range(1, len(parts) + 1))

    def preload(self, modules):
        """Imports `modules`, leaving out those that fail to import and those skipped."""
        for module in modules:
            if module not in sys.modules and not self.skips(module):
                self.attempt(module, lambda: importlib.import_module(module))


def program_imports(options, preloads):
    """The modules the program imports at top level. A module's file is found with its parent packages imported
    (checked as a preload of the module)."""
    if not options.module:
        return top_level_imports(options.script, None)

    def find():
        spec = importlib.util.find_spec(options.script)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(options.script + ".__main__")
        return spec

    spec = None if preloads.skips(options.script) else preloads.attempt(options.script, find)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return []
    return top_level_imports(spec.origin, spec.parent)


def trial_imports(program):
    """The modules the program imports when it runs once on TRIAL_INPUT (its start-up and its first requests), in the
    order they were first imported, those imported already and any `__main__` left out. None when the trial does
    not end within TRIAL_SECONDS."""
    before = set(sys.modules)
    read_fd, write_fd = os.pipe()
    input_fd, feed_fd = os.pipe()
    os.write(feed_fd, TRIAL_INPUT)  # well under a pipe's buffer
    os.close(feed_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        null = os.open(os.devnull, os.O_RDWR)
        run_child(program, [input_fd, null, null], report=write_fd)
    os.close(input_fd)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + TRIAL_SECONDS
    try:
        while True:
            ready, _, _ = select.select([read_fd], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                chunks = None
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if chunks is None:
        return None
    names = b"".join(chunks).decode("utf-8", "replace").split("\n")
    return [name for name in names if name and name not in before and "__main__" not in name.split(".")]


def preload_all(options):
    """Imports the `--preload` modules; with `--preload-imports`, then the program's own imports, the SDKs installed
    and what a trial run of the program imports. Returns the line naming what was preloaded. Raises Unfit."""
    saved = os.dup(1)
    with tempfile.TemporaryFile() as stdout:
        os.dup2(stdout.fileno(), 1)
        try:
            preloads = Preloads(stdout, ())
            for module in options.preload:
                preloads.attempt(module, lambda: importlib.import_module(module), optional=False)
            if not options.preload_imports:
                return ", ".join(options.preload)
            preloads.skipped.update(options.skip_preload)
            named = program_imports(options, preloads)
            preloads.preload(named)
            preloads.preload(sdk for sdk in SDKS if preloads.attempt(sdk, lambda: importlib.util.find_spec(sdk)))
            program = Program(options.script, options.args, options.module, False)
            trial = trial_imports(program)
            preloads.preload(trial or ())
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
    names = reported(options.preload + named + [sdk for sdk in SDKS if sdk in sys.modules])
    if trial is None:
        return "%s (a trial run did not end within %d s)" % (
            ", ".join(names) or "nothing beyond the standard library",
            TRIAL_SECONDS,
        )
    more = len([name for name in trial if name in sys.modules])
    started = "%d %smodule%s a trial run imported" % (more, "more " if names else "", "" if more == 1 else "s")
    parts = [", ".join(names)] * bool(names) + [started] * bool(more)
    return " and ".join(parts) or "nothing beyond the standard library"


def reported(modules):
    """The preloads worth naming: imported, not of the standard library, neither under nor above one named before."""
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    named = []
    for module in modules:
        if module not in sys.modules or module.split(".")[0] in stdlib:
            continue
        if not any(related(module, other) for other in named):
            named.append(module)
    return named


def related(module, other):
    """Whether one of two module names is the other, or under it."""
    return module == other or module.startswith(other + ".") or other.startswith(module + ".")


def restart_without(unfit):
    """Starts this fork server over with the top-level package of `unfit.module` left to each server (a module that
    started a thread or wrote to stdout at import is imported by each forked server, as a plain process does; its
    package goes with it, since any of its submodules imports it: `numpy._core._exceptions` names numpy, whose import
    starts OpenBLAS's threads). Returns only when the command line cannot be rebuilt (Python before 3.10) or it has
    left out RESTARTS packages already."""
    argv = getattr(sys, "orig_argv", None)
    if argv is None or argv.count("--skip-preload") >= RESTARTS or sys.argv[0] not in argv:
        return
    package = unfit.module.split(".")[0]
    how = "it %s at import" % unfit.why if package == unfit.module else "importing %s %s" % (unfit.module, unfit.why)
    print(f"wirefuzz-forkserver: not preloading {package} ({how})", file=sys.stderr, flush=True)
    at = argv.index(sys.argv[0]) + 1
    os.execv(sys.executable, argv[:at] + ["--skip-preload", package] + argv[at:])


def run_child(program, fds, report=None):
    """In the forked child: take the client's fds as 0, 1 and 2, run the program as a plain process would, exit.
    With `report` (a trial run), write the names of the modules imported to that fd at the end."""
    signal.set_wakeup_fd(-1)
    die_with_parent()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # New standard streams on the new fds: the parent's objects carry its buffering (a tty's line buffering).
    sys.stdin = sys.__stdin__ = open(0, "r", encoding="utf-8", closefd=False)
    if program.unbuffered:
        # As `python -u` has it: writes go straight to the fd.
        raw = io.FileIO(1, "w", closefd=False)
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    else:
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = sys.__stderr__ = open(
        2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
    )
    sys.argv = [program.script] + list(program.args)
    code = 0
    try:
        if program.module:
            # As `python -m`: sys.argv[0] becomes the module's file.
            runpy.run_module(program.script, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(program.script, run_name="__main__")
    except SystemExit as exit:
        code = exit_code(exit.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    # What interpreter shutdown would do: exit handlers (the preloaded modules' too, as a fresh process has them),
    # then flushed streams. os._exit keeps the parent's state (its sockets, its selector) out of it.
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    if report is not None:
        with os.fdopen(report, "wb") as out:
            out.write("\n".join(list(sys.modules)).encode("utf-8", "replace"))
    os._exit(code)


def exit_code(value):
    """The process exit code SystemExit(value) gives."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def status_line(status):
    """The line that reports a wait status to the client."""
    if os.WIFSIGNALED(status):
        return b"signal %d\n" % os.WTERMSIG(status)
    return b"exit %d\n" % os.waitstatus_to_exitcode(status)


class Program:
    """What each child runs: a script, or a module (`module`), with its arguments; `unbuffered` as `python -u`."""

    def __init__(self, script, args, module, unbuffered):
        self.script, self.args, self.module, self.unbuffered = script, args, module, unbuffered


class ForkServer:
    """The listening socket, the clients with their children, and the select loop."""

    def __init__(self, path, program):
        self.program = program
        # Bound and listening under a temporary name, then renamed: the path appears only once a client can
        # connect (a client that saw the path between bind and listen was refused).
        temporary = "%s.%d.tmp" % (path, os.getpid())
        if os.path.exists(temporary):
            os.unlink(temporary)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(temporary)
        self.listener.listen(64)
        os.replace(temporary, path)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        # A handler (not SIG_DFL) so SIGCHLD is delivered and writes the wake-up byte.
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "reap")
        self.children = {}  # pid -> client socket

    def serve(self):
        while True:
            for key, _ in self.selector.select():
                if key.data == "accept":
                    self.accept()
                elif key.data == "reap":
                    self.reap()
                else:
                    self.client_spoke(key.fileobj, key.data)

    def accept(self):
        try:
            client, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        try:
            client.settimeout(5)
            message, fds, _, _ = socket.recv_fds(client, 1, 3)
        except OSError as error:
            print(f"wirefuzz-forkserver: bad client: {error}", file=sys.stderr)
            client.close()
            return
        if message != HELLO or len(fds) != 3:
            print(f"wirefuzz-forkserver: bad hello {message!r} with {len(fds)} fds", file=sys.stderr)
            for fd in fds:
                os.close(fd)
            client.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = fork_with_retries()
        except OSError as error:
            # No child: the client is closed without a status, so its stub says it ran no server and the harness
            # stops with that error. The fork server goes on serving.
            print(f"wirefuzz-forkserver: cannot fork: {error}", file=sys.stderr)
            for fd in fds:
                os.close(fd)
            client.close()
            return
        if pid == 0:
            try:
                self.listener.close()
                self.selector.close()
                os.close(self.wake_read)
                os.close(self.wake_write)
                for other in self.children.values():
                    if other is not None:
                        other.close()
                client.close()
                run_child(self.program, fds)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(121)  # only reached if run_child itself failed
        for fd in fds:
            os.close(fd)
        client.setblocking(False)
        self.children[pid] = client
        self.selector.register(client, selectors.EVENT_READ, pid)

    def client_spoke(self, client, pid):
        """The client wrote or went away: either way it no longer waits for this child, which is killed."""
        if self.children.get(pid) is not client:
            return  # the child's exit was answered (and this client closed) earlier in the same turn of the loop
        try:
            if client.recv(64):
                return  # stray bytes: ignored
        except BlockingIOError:
            return
        except OSError:
            pass
        kill(pid)
        # Reaped by reap() on SIGCHLD; the client is dropped now.
        self.selector.unregister(client)
        client.close()
        self.children[pid] = None

    def reap(self):
        try:
            while os.read(self.wake_read, 512):
                pass
        except BlockingIOError:
            pass
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            client = self.children.pop(pid, None)
            if client is None:
                continue
            self.selector.unregister(client)
            try:
                client.setblocking(True)
                client.settimeout(1)
                client.sendall(status_line(status))
            except OSError:
                pass
            client.close()


def main(argv):
    options = parse_args(argv)
    if options.module:
        # As `python -m MODULE` would have it: the current folder first on the import path.
        sys.path[0] = os.getcwd()
    elif os.path.isfile(options.script):
        # As `python SCRIPT` would have it: the script's folder first on the import path.
        sys.path[0] = os.path.dirname(os.path.abspath(options.script))
    else:
        sys.exit(f"wirefuzz-forkserver: no such script: {options.script}")
    try:
        preloaded = preload_all(options)
    except Unfit as unfit:
        if options.preload_imports and unfit.module not in options.preload:
            restart_without(unfit)
        print(f"wirefuzz-forkserver: not fork-safe: importing {unfit}", file=sys.stderr, flush=True)
        sys.exit(NOT_FORK_SAFE)
    if preloaded:
        print(f"wirefuzz-forkserver: preloaded: {preloaded}", file=sys.stderr, flush=True)
    # `python -u` makes the standard streams write through; the children's new streams do the same.
    unbuffered = bool(getattr(sys.__stdout__, "write_through", False))
    program = Program(options.script, options.args, options.module, unbuffered)
    server = ForkServer(options.socket, program)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"wirefuzz-forkserver: listening on {options.socket}", file=sys.stderr, flush=True)
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        for pid in list(server.children):
            kill(pid)
        if os.path.exists(options.socket):
            os.unlink(options.socket)


if __name__ == "__main__":
    main(sys.argv[1:])
