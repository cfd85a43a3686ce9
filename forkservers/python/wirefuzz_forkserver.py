"""A fork server for Python MCP servers over stdio: imports the SDK once, then forks a fresh server per connection.

A Python SDK server spends over a second importing its SDK before it reads its first line, so a harness that starts
one process per conversation mostly measures imports. This script pays that once: it imports the modules given with
`--preload` (and anything they import), listens on a Unix socket, and for every client forks a child that runs the
server script as `__main__` with the client's stdin, stdout and stderr. Each child is a fresh process as far as the
conversation can tell (its own connection state, its own event loop), started in milliseconds.

The client is `mcp-wirefuzz attach SOCKET`, which mcp-wirefuzz starts as the server command:

    .venv/bin/python forkservers/python/wirefuzz_forkserver.py --socket /tmp/calc.sock \\
        --preload mcp.server.mcpserver tests/servers/calc.py &
    mcp-wirefuzz fuzz --jobs 2 -- mcp-wirefuzz attach /tmp/calc.sock

The wire protocol on the socket, per connection: the client sends one byte `F` carrying its fds 0, 1 and 2
(SCM_RIGHTS); the server forks a child on them and, when the child ends, writes one line `exit N` or `signal N`
and closes the connection. If the client goes away first, the child is killed (SIGKILL): a harness that gives up on
a hung server kills the stub, and the server it stood for goes with it.

Standard library only (Python 3.9+), single-threaded: one select loop over the listening socket, the client
connections and a wake-up pipe written on SIGCHLD. Forking from a process with threads is unsafe, so preloaded
modules must not start threads at import.
"""

import argparse
import atexit
import errno
import importlib
import os
import runpy
import selectors
import signal
import socket
import sys
import time
import traceback

#: The byte a client sends with its three file descriptors.
HELLO = b"F"

#: How many times a fork is tried while the system is out of processes or memory, waiting 10 ms, then twice as
#: long each time (about 2.5 s in all).
FORK_ATTEMPTS = 9


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
    parser.add_argument("script", help="the server script, run as __main__ in each child")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser.parse_args(argv)


def run_child(script, args, fds):
    """In the forked child: take the client's fds as 0, 1 and 2, run the script as a program would run, exit."""
    signal.set_wakeup_fd(-1)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # New standard streams on the new fds: the parent's objects carry its buffering (a tty's line buffering).
    sys.stdin = sys.__stdin__ = open(0, "r", encoding="utf-8", closefd=False)
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = sys.__stderr__ = open(
        2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
    )
    sys.argv = [script] + list(args)
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
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


class ForkServer:
    """The listening socket, the clients with their children, and the select loop."""

    def __init__(self, path, script, args):
        self.script, self.args = script, args
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
                run_child(self.script, self.args, fds)
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
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
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
    if not os.path.isfile(options.script):
        sys.exit(f"wirefuzz-forkserver: no such script: {options.script}")
    # As `python SCRIPT` would have it: the script's folder first on the import path.
    sys.path[0] = os.path.dirname(os.path.abspath(options.script))
    for module in options.preload:
        importlib.import_module(module)
    server = ForkServer(options.socket, options.script, options.args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"wirefuzz-forkserver: listening on {options.socket}", file=sys.stderr, flush=True)
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        for pid in list(server.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if os.path.exists(options.socket):
            os.unlink(options.socket)


if __name__ == "__main__":
    main(sys.argv[1:])
