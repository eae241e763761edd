import Glibc
import Foundation

/// Monotonic nanoseconds.
func nowNanoseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
}

/// Runs `body` and returns the nanoseconds it took divided by `events`.
func nanosecondsPerEvent(_ events: Int, _ body: () throws -> Void) rethrows -> Double {
    let start = nowNanoseconds()
    try body()
    return (nowNanoseconds() - start) / Double(events)
}

/// A mutable counter shared with closures that the compiler wants Sendable;
/// each contender touches it from one thread at a time.
final class Counter: @unchecked Sendable {
    /// Unchecked like a C counter: the contenders' own bookkeeping should
    /// not pay Swift's dynamic exclusivity check per event.
    @exclusivity(unchecked) var value = 0
}

/// A thread running `body`, joined with `join()`.
final class ProducerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }

    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        precondition(pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context) == 0)
    }

    func join() { pthread_join(thread, nil) }
}

/// The median of `rounds` measurements.
func median(rounds: Int, _ measure: () throws -> Double) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<rounds { samples.append(try measure()) }
    samples.sort()
    return samples[samples.count / 2]
}

/// Writes `text` to standard error after flushing standard output. Both
/// often go to one file (`compare … > log 2>&1`), where stdout is
/// block-buffered and stderr is not: unflushed, a stderr line (the missed
/// targets, say) landed in the middle of a table row.
func writeToStandardError(_ text: String) {
    fflush(nil)  // every output stream: standard output among them
    FileHandle.standardError.write(Data(text.utf8))
}
