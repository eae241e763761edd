import Glibc

/// A thread running `body`, joined with `join()`.
public final class TestThread: @unchecked Sendable {
    private var thread = pthread_t()
    private final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }

    public init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed")
    }

    public func join() { pthread_join(thread, nil) }
}

/// A pipe whose ends are closed on deinit.
public final class TestPipe: @unchecked Sendable {
    public let readEnd: Int32
    public let writeEnd: Int32
    public init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }
    deinit { close(readEnd); close(writeEnd) }

    public func writeByte() { var byte: UInt8 = 1; _ = write(writeEnd, &byte, 1) }
    public func drain() { var buffer = [UInt8](repeating: 0, count: 64); _ = read(readEnd, &buffer, 64) }
}
