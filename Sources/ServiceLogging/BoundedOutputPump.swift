import Glibc
import MainLoop

/// Writes lines to a descriptor (the service's stdout) from a thread of its
/// own, so the loop never waits for a reader: the loop only appends to a
/// bounded queue. When the queue is full (nobody reads, or too slowly) a
/// line is dropped and counted, never blocking and never growing without
/// bound. Safe from any thread.
public final class BoundedOutputPump: @unchecked Sendable {
    /// The most bytes waiting to be written.
    public let limitBytes: Int
    private let descriptor: Int32
    /// How long the writer waits for more lines after a batch before it
    /// sleeps until signalled: the most a line waits while lines keep coming.
    static let linger = Duration.milliseconds(1)
    /// Lines written on this loop's thread wake the writer once per
    /// dispatch turn rather than once each (see ``init(descriptor:limitBytes:wakingFrom:)``).
    /// Weak: a pump that outlives its loop (the process's shared stderr
    /// pump) does not keep the loop's descriptors open; once the loop is
    /// gone, lines wake the writer at once. Guarded by `mutex`.
    private weak var loop: MainRunLoop?
    /// Allocated, not stored inline: a pthread object must not move, and
    /// `&property` of a class paid Swift's dynamic exclusivity check.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    // Guarded by `mutex`. Swift's dynamic exclusivity checks stay on here:
    // skipping them saved about one percent of a printed event (the
    // `events` row of Benchmarks/socket/instructions.sh), within that
    // row's spread.
    /// The lines waiting, newline-terminated, in one buffer: appending
    /// copies bytes, with no allocation per line once it has grown.
    private var queue: [UInt8] = []
    /// Bytes not yet written: `queue` plus what the writer is writing.
    private var queuedBytes = 0
    private var writing = false
    /// The writer sleeps on `changed`: only then does a line signal it (a
    /// busy writer finds the new lines when its write returns), so a burst
    /// of lines costs one wake-up, not one each.
    private var writerWaits = false
    /// A wake-up of the sleeping writer is posted to `loop` and not yet run.
    private var wakePosted = false
    /// The writer thread was started (by the first line, its loop's turn,
    /// or `finish`).
    private var writerStarted = false
    /// A line came on the loop's thread: the loop starts the writer in its
    /// turn (unless a line from another thread starts it first).
    private var writerStartPosted = false
    private var finishing = false
    private var broken = false
    private var dropped = 0
    /// Why writing stopped: the `errno` of the write that failed (or of the
    /// writer thread's start). Guarded by `mutex`.
    private var failure: Int32?

    /// A pump for `descriptor`. Its writer thread starts with the first
    /// line: a pump that is never written to (a service's stdout when
    /// nothing is observed) costs no thread. The thread is named `ml-out-fd`
    /// and the descriptor's number (as `top -H` shows it). If it cannot be
    /// started, the lines queued and every later one are dropped and
    /// counted: writing synchronously is what must not happen.
    ///
    /// With `loop`, a line written on that loop's thread while the writer
    /// sleeps does not wake it at once: one wake-up is posted to the loop
    /// (at system priority, so it runs after the work already ready there),
    /// and every line the loop writes until it runs goes out in one batch,
    /// at the cost of one futex wake per turn instead of one per line.
    /// Lines from other threads, or after the loop shut down, wake the
    /// writer at once. The first line written on the loop's thread starts
    /// the writer the same way, in the loop's turn: a service that logs
    /// while it starts (before its loop runs) does not wait for two thread
    /// creations before it reports ready; its lines wait queued until the
    /// loop's first turn (or a line from another thread, or
    /// ``finish(within:)``, which start the writer at once).
    ///
    /// After each batch the writer waits up to 1 ms for more lines before
    /// it sleeps; lines written meanwhile, from any thread, go out then with
    /// no wake-up at all. Under a steady stream of lines that is one
    /// wake-up a millisecond, and a line waits at most 1 ms for its write.
    public init(descriptor: Int32, limitBytes: Int = 8 << 20, wakingFrom loop: MainRunLoop? = nil) {
        self.descriptor = descriptor
        self.loop = loop
        self.limitBytes = max(1, limitBytes)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        changed.initialize(to: pthread_cond_t())
        // Timed waits on the monotonic clock: a wall clock set back must
        // not stretch the writer's linger (or `finish`) by as much.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// The loop whose thread's lines wake the writer once per turn (and
    /// start it, in the turn of the first line), as
    /// ``init(descriptor:limitBytes:wakingFrom:)`` sets it: settable later
    /// for a pump made before its loop, such as
    /// ``BoundedLogHandler/standardError``. Held weakly. Safe from any thread.
    public var wakingLoop: MainRunLoop? {
        get {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return loop
        }
        set {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            loop = newValue
        }
    }

    /// Whether the writer thread was started (for the tests).
    var writerThreadStarted: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return writerStarted
    }

    /// Starts the writer for a line written while none runs (called with
    /// `mutex` held): a line on the loop's thread has the loop start it in
    /// its turn (posted once); a line from any other thread starts it now,
    /// so lines never wait for a loop that does not turn.
    private func startWriterForLine() {
        if writerStartPosted, loop?.inLoop == true { return }
        if !writerStartPosted, postToLoopTurn({ [self] in
            pthread_mutex_lock(mutex)
            // `finish` may have started it (and then no more are wanted).
            if !writerStarted, !finishing { startWriter() }
            pthread_mutex_unlock(mutex)
        }) {
            writerStartPosted = true
            return
        }
        startWriter()
    }

    /// Posts `work` to the loop's turn (at system priority, after the work
    /// already ready there) when the caller is on the loop's thread; false
    /// when it is not, or the loop shut down and takes no work (no turn will
    /// come): the caller then acts at once. `work` takes `mutex` itself.
    /// Called with `mutex` held.
    private func postToLoopTurn(_ work: @escaping () -> Void) -> Bool {
        guard let loop, loop.inLoop else { return false }
        do {
            try loop.executeInLoop(priority: .system, work)
            return true
        } catch {
            return false
        }
    }

    /// Starts the writer thread; called with `mutex` held. The thread holds
    /// the pump until it ends.
    private func startWriter() {
        writerStarted = true
        let context = Unmanaged.passRetained(self).toOpaque()
        // Detached: finish() waits for the queue, not the thread. Started
        // with the signals blocked (HelperThread says why), SIGPIPE among
        // them: a reader that went away makes write() fail with EPIPE
        // instead of killing the process.
        let status = HelperThread.startDetached(context: context) { raw in
            let pump = Unmanaged<BoundedOutputPump>.fromOpaque(raw!).takeRetainedValue()
            HelperThread.nameCurrentThread("ml-out-fd\(pump.descriptor)")
            pump.drain()
            return nil
        }
        if status != 0 {
            // No thread: the lines queued (while the loop's turn was
            // awaited), this one and every later one are dropped and counted
            // (writing on the caller's thread could block it).
            Unmanaged<BoundedOutputPump>.fromOpaque(context).release()
            broken = true
            failure = status
            dropped += queue.count(where: { $0 == UInt8(ascii: "\n") })
            queue.removeAll()
            queuedBytes = 0
        }
    }

    /// Runs once the last reference is gone: a started writer thread holds
    /// one until it ends.
    deinit {
        pthread_cond_destroy(changed)
        changed.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Queues `line` plus a newline; returns false if it was dropped (the
    /// queue is full or the descriptor failed).
    @discardableResult
    public func write(line: String) -> Bool {
        write(lineBytes: line.utf8)
    }

    /// Queues the UTF-8 bytes of a line plus a newline (a line serialized
    /// straight to bytes, with no String in between); returns false if it
    /// was dropped (the queue is full or the descriptor failed).
    @discardableResult
    public func write<Bytes: Collection<UInt8>>(lineBytes bytes: Bytes) -> Bool {
        // A contiguous line is one copy; the generic append is not
        // specialized across modules (`scripts/service-instructions.sh events`).
        bytes.withContiguousStorageIfAvailable { write(contiguousLine: $0) }
            ?? Array(bytes).withUnsafeBufferPointer { write(contiguousLine: $0) }
    }

    /// Queues the bytes of a line plus a newline: the generic form's work
    /// for an array, which `mainloop run`'s observation lines are, without
    /// its calls through `Sequence`'s witness table (not specialized across
    /// modules: `scripts/service-instructions.sh events` shows the cost).
    @discardableResult
    public func write(lineBytes bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { write(contiguousLine: $0) }
    }

    /// Queues the bytes of a line, in memory the caller owns, plus a
    /// newline (a line assembled in a buffer of one's own, as a session
    /// recorder's steps are).
    @discardableResult
    public func write(lineBuffer bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        write(contiguousLine: bytes)
    }

    private func write(contiguousLine bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count + 1
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !writerStarted, !finishing { startWriterForLine() }
        guard !broken, !finishing, queuedBytes + count <= limitBytes else {
            dropped += 1
            return false
        }
        queuedBytes += count
        queue.append(contentsOf: bytes)
        queue.append(UInt8(ascii: "\n"))
        if writerWaits, !wakePosted { wakeWriter() }
        return true
    }

    /// Wakes the sleeping writer: through the loop when called on its
    /// thread, else at once. Called with `mutex` held.
    private func wakeWriter() {
        let posted = postToLoopTurn { [self] in
            pthread_mutex_lock(mutex)
            wakePosted = false
            if writerWaits, !queue.isEmpty { pthread_cond_signal(changed) }
            pthread_mutex_unlock(mutex)
        }
        if posted { wakePosted = true } else { pthread_cond_signal(changed) }
    }

    /// The `errno` of the failure that stopped the pump (a write that
    /// failed: ENOSPC on a full disk, EPIPE, or the writer thread's start),
    /// nil while it writes. Every line after it is dropped and counted.
    public var failureErrno: Int32? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return failure
    }

    /// Lines dropped so far.
    public var droppedLines: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return dropped
    }

    /// Bytes waiting now.
    public var pendingBytes: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return queuedBytes
    }

    /// Stops taking lines and waits up to `limit` for what is queued to be
    /// written (starting the writer if the lines still wait for the loop's
    /// turn). Returns the bytes still unwritten (0 when all got out); a
    /// reader that never reads cannot hold the caller longer than `limit`.
    public func finish(within limit: Duration) -> Int {
        var deadline = Self.monotonicDeadline(after: limit)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        finishing = true
        // Lines queued for the loop's turn that has not come yet.
        if !writerStarted, queuedBytes > 0 { startWriter() }
        pthread_cond_broadcast(changed)
        while (queuedBytes > 0 || writing) && !broken {
            if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT { break }
        }
        return queuedBytes
    }

    /// The writer thread: takes everything queued (swapping buffers, so
    /// the loop appends to the other one meanwhile), writes it in as few
    /// `write` calls as the descriptor takes (blocking, outside the lock),
    /// and repeats until finished.
    private func drain() {
        var batch: [UInt8] = []
        var lingered = false
        pthread_mutex_lock(mutex)
        while true {
            while queue.isEmpty && !finishing {
                // After a batch, wait a moment for more lines without being
                // signalled: under load the loop then posts no wake-up and
                // pays no futex per turn (one wake-up a millisecond instead
                // of one a turn); a line waits at most that long. Only a
                // writer idle that long sleeps until a line signals it.
                if !lingered {
                    lingered = true
                    var deadline = Self.monotonicDeadline(after: Self.linger)
                    _ = pthread_cond_timedwait(changed, mutex, &deadline)  // a timeout is the expected end
                    continue
                }
                writerWaits = true
                pthread_cond_wait(changed, mutex)
                writerWaits = false
            }
            if queue.isEmpty { break }
            lingered = false
            swap(&batch, &queue)
            writing = true
            pthread_mutex_unlock(mutex)
            let (written, error) = writeAll(batch)
            pthread_mutex_lock(mutex)
            writing = false
            queuedBytes -= written
            if written < batch.count {
                // EPIPE or another error: nobody will read what is left.
                // The lines lost are those not written whole: every
                // newline not written, here and in what queued meanwhile.
                broken = true
                failure = error
                let newline = UInt8(ascii: "\n")
                dropped += batch[written...].count(where: { $0 == newline }) + queue.count(where: { $0 == newline })
                queue.removeAll()
                queuedBytes = 0
            }
            // A burst's buffer is not kept: the loop's next lines start small.
            if batch.capacity > 1 << 20 { batch = [] } else { batch.removeAll(keepingCapacity: true) }
            pthread_cond_broadcast(changed)
            if broken { break }
        }
        pthread_mutex_unlock(mutex)
    }

    /// The `CLOCK_MONOTONIC` time `limit` from now, for a timed wait on
    /// `changed` (whose clock that is).
    private static func monotonicDeadline(after limit: Duration) -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = limit.components
        let nanoseconds = Int64(deadline.tv_nsec) + attoseconds / 1_000_000_000
        deadline.tv_sec += Int(seconds) + Int(nanoseconds / 1_000_000_000)
        deadline.tv_nsec = Int(nanoseconds % 1_000_000_000)
        return deadline
    }

    /// Writes `bytes` until done or failed; returns how many went out, and
    /// the `errno` of the write that failed.
    private func writeAll(_ bytes: [UInt8]) -> (written: Int, errno: Int32) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return (offset, errno)
            }
            offset += count
        }
        return (offset, 0)
    }
}
