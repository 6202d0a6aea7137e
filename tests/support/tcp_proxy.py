"""A TCP proxy on loopback that a test can cut and restore, to give a process the view of a database server that
restarts (every connection dropped, new ones refused for a while) without touching the shared server."""

import socket
import threading
from typing import Self


class TcpProxy:
    """Forward ``127.0.0.1:<port>`` to ``upstream`` (host, port). :meth:`cut` drops every open connection and
    stops accepting new ones (a connect is refused, as by a server that is down); :meth:`restore` listens again on
    the same port. Use as a context manager; ``port`` is chosen free at start."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.port = 0
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.accepted = 0

    def __enter__(self) -> Self:
        self.restore()
        return self

    def __exit__(self, *exc) -> None:
        self.cut()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.listener = listener
        self.acceptor = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self.acceptor.start()

    def cut(self) -> None:
        listener, self.listener = self.listener, None
        if listener is not None:
            # shutdown wakes the thread blocked in accept(); it must be gone before a new listener could get the
            # same descriptor number and have its connections taken by the old thread.
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.acceptor.join(timeout=5)
            listener.close()
        with self.lock:
            dropped, self.connections = self.connections, []
        for sock in dropped:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                if self.listener is not listener:  # cut while connecting
                    client.close(), server.close()
                    return
                self.connections += [client, server]
                self.accepted += 1
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
