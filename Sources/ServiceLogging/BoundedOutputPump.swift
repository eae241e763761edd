import Glibc

/// Writes lines to a descriptor (the service's stdout) from a thread of its
/// own, so the loop never waits for a reader: the loop only appends to a
/// bounded queue. When the queue is full (nobody reads, or too slowly) a
/// line is dropped and counted, never blocking and never growing without
/// bound. Safe from any thread.
public final class BoundedOutputPump: @unchecked Sendable {
    /// The most bytes waiting to be written.
    public let limitBytes: Int
    private let descriptor: Int32
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()
    // Guarded by `mutex`:
    private var queue: [[UInt8]] = []
    private var queuedBytes = 0
    private var writing = false
    private var finishing = false
    private var broken = false
    private var dropped = 0
    private var thread = pthread_t()

    /// Starts the writer thread for `descriptor`.
    public init(descriptor: Int32, limitBytes: Int = 8 << 20) {
        self.descriptor = descriptor
        self.limitBytes = max(1, limitBytes)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            let pump = Unmanaged<BoundedOutputPump>.fromOpaque(raw!).takeRetainedValue()
            pump.drain()
            return nil
        }, context)
        if status == 0 {
            pthread_detach(thread)  // finish() waits for the queue, not the thread
        } else {
            // No thread: write synchronously is what must not happen, so
            // everything is dropped and counted instead.
            Unmanaged<BoundedOutputPump>.fromOpaque(context).release()
            broken = true
        }
    }

    /// Queues `line` plus a newline; returns false if it was dropped (the
    /// queue is full or the descriptor failed).
    @discardableResult
    public func write(line: String) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard !broken, !finishing, queuedBytes + bytes.count <= limitBytes else {
            dropped += 1
            return false
        }
        queuedBytes += bytes.count
        queue.append(bytes)
        pthread_cond_signal(&changed)
        return true
    }

    /// Lines dropped so far.
    public var droppedLines: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return dropped
    }

    /// Bytes waiting now.
    public var pendingBytes: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return queuedBytes
    }

    /// Stops taking lines and waits up to `limit` for what is queued to be
    /// written. Returns the bytes still unwritten (0 when all got out); a
    /// reader that never reads cannot hold the caller longer than `limit`.
    public func finish(within limit: Duration) -> Int {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let (seconds, attoseconds) = limit.components
        deadline.tv_sec += Int(seconds) + Int((Int64(deadline.tv_nsec) + attoseconds / 1_000_000_000) / 1_000_000_000)
        deadline.tv_nsec = Int((Int64(deadline.tv_nsec) + attoseconds / 1_000_000_000) % 1_000_000_000)
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        finishing = true
        pthread_cond_broadcast(&changed)
        while (queuedBytes > 0 || writing) && !broken {
            if pthread_cond_timedwait(&changed, &mutex, &deadline) == ETIMEDOUT { break }
        }
        return queuedBytes
    }

    /// The writer thread: takes everything queued, writes it (blocking,
    /// outside the lock), and repeats until finished.
    private func drain() {
        // A reader that went away makes write() fail with EPIPE; SIGPIPE,
        // directed at this thread, stays blocked here instead of killing
        // the process.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        pthread_mutex_lock(&mutex)
        while true {
            while queue.isEmpty && !finishing { pthread_cond_wait(&changed, &mutex) }
            if queue.isEmpty { break }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            writing = true
            pthread_mutex_unlock(&mutex)
            var writtenLines = 0, writtenBytes = 0
            while writtenLines < batch.count, writeAll(batch[writtenLines]) {
                writtenBytes += batch[writtenLines].count
                writtenLines += 1
            }
            pthread_mutex_lock(&mutex)
            writing = false
            queuedBytes -= writtenBytes
            if writtenLines < batch.count {
                // EPIPE or another error: nobody will read what is left.
                broken = true
                dropped += batch.count - writtenLines + queue.count
                queue.removeAll()
                queuedBytes = 0
            }
            pthread_cond_broadcast(&changed)
            if broken { break }
        }
        pthread_mutex_unlock(&mutex)
    }

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }
}
