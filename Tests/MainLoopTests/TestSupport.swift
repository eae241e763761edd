import Glibc
import MainLoop
import Synchronization

/// A thread running `body`, joined with `join()`.
final class TestThread: @unchecked Sendable {
    private var thread = pthread_t()
    private final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }

    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed")
    }

    func join() { pthread_join(thread, nil) }
}

/// A pipe whose ends are closed on deinit.
final class TestPipe: @unchecked Sendable {
    let readEnd: Int32
    let writeEnd: Int32
    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }
    deinit { close(readEnd); close(writeEnd) }

    func writeByte() { var byte: UInt8 = 1; _ = write(writeEnd, &byte, 1) }
    func drain() { var buffer = [UInt8](repeating: 0, count: 64); _ = read(readEnd, &buffer, 64) }
}

/// Records strings in order (loop thread only, so no lock).
final class Recorder {
    var entries: [String] = []
    func callAsFunction(_ entry: String) { entries.append(entry) }
}
