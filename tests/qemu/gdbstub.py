"""A minimal client of QEMU's gdbstub (the GDB remote serial protocol), for
the test runner's machine-check injection: stop a CPU exactly at a kernel
instruction with a breakpoint, step it, and let it go.

Only what the runner needs: software breakpoints (Z0/z0), continue (c),
single-stepping one CPU while the others stay stopped (vCont;s), and detach
(D, which lets the VM run again). Thread ids are QEMU's: CPU index + 1.
QEMU stops the whole VM when a client connects.
"""
import re
import socket
import time

STOP_THREAD_RE = re.compile(r'^T[0-9a-fA-F]{2}.*?thread:(?:p[0-9a-fA-F]+\.)?([0-9a-fA-F]+);')


class GdbError(RuntimeError):
    pass


def checksum(data):
    return sum(data.encode()) & 0xff


class GdbStub:
    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        for _ in range(50):
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.1)
        else:
            self.sock.close()
            raise GdbError(f'no gdbstub at {path}')
        self.buf = b''
        try:                # the stop report of the VM stopped for us, if any
            self.receive(timeout=2)
        except TimeoutError:
            pass

    def close(self):
        self.sock.close()

    def send(self, data, timeout=None):
        """Send one packet; returns the reply packet's payload."""
        self.sock.sendall(f'${data}#{checksum(data):02x}'.encode())
        return self.receive(timeout)

    def receive(self, timeout=None):
        """The next packet's payload (acks and notifications skipped)."""
        old = self.sock.gettimeout()
        if timeout is not None:
            self.sock.settimeout(timeout)
        try:
            while True:
                start = self.buf.find(b'$')
                end = self.buf.find(b'#', start + 1) if start >= 0 else -1
                if start >= 0 and end >= 0 and len(self.buf) >= end + 3:
                    payload = self.buf[start + 1:end].decode('latin-1')
                    self.buf = self.buf[end + 3:]
                    self.sock.sendall(b'+')
                    return payload
                data = self.sock.recv(4096)
                if not data:
                    raise GdbError('the gdbstub closed the connection')
                self.buf += data
        finally:
            self.sock.settimeout(old)

    def expect_ok(self, data):
        reply = self.send(data)
        if reply != 'OK':
            raise GdbError(f'{data}: {reply or "not supported"}')

    def insert_breakpoint(self, addr):
        self.expect_ok(f'Z0,{addr:x},1')

    def remove_breakpoint(self, addr):
        self.expect_ok(f'z0,{addr:x},1')

    @staticmethod
    def stopped_cpu(reply):
        """The CPU index a stop reply names (None for any other reply)."""
        m = STOP_THREAD_RE.match(reply)
        return int(m.group(1), 16) - 1 if m else None

    def cont(self, timeout):
        """Let every CPU run until one stops; returns the CPU index."""
        reply = self.send('c', timeout)
        cpu = self.stopped_cpu(reply)
        if cpu is None:
            raise GdbError(f'the VM stopped with "{reply[:60]}"')
        return cpu

    def step(self, cpu, timeout=10):
        """Execute one instruction on this CPU, the others stopped."""
        reply = self.send(f'vCont;s:{cpu + 1:x}', timeout)
        if self.stopped_cpu(reply) is None:
            raise GdbError(f'the step stopped with "{reply[:60]}"')

    def detach(self):
        """Remove nothing, let the VM run, close."""
        try:
            self.send('D')
        finally:
            self.close()
