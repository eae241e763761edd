import Foundation
import Glibc
import Synchronization

/// A child process for tests, with the part of Foundation's `Process`
/// interface the tests use, started with `posix_spawn`.
///
/// Foundation's `Process.run()` (swift-corelibs-foundation in Swift 6.3)
/// reads `/proc/self/fd` entries past their end to find the highest open
/// descriptor, and crashes the whole test run about once in five full
/// runs; `posix_spawn` with `posix_spawn_file_actions_addclosefrom_np`
/// closes the same descriptors without reading the directory.
///
/// The child starts as a shell would start it: no signal blocked, every
/// signal's action the default, descriptors 0–2 as configured and no other
/// descriptor of the test process open (it holds no other test's pipe or
/// socket). A child is reaped only by `isRunning` and the waits, by its
/// PID, so it never takes another child's status.
public final class TestProcess: @unchecked Sendable {
    /// How the process ended, as Foundation's `Process.TerminationReason` says it.
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    /// The executable (an absolute path or one relative to the working directory).
    public var executableURL: URL?
    /// The arguments after the executable's name.
    public var arguments: [String]?
    /// The whole environment; nil: the test process's own.
    public var environment: [String: String]?
    /// The child's working directory; nil: the test process's.
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle` (`FileHandle.nullDevice` too), or nil for the test process's own.
    public var standardInput: Any?
    /// A `Pipe`, a `FileHandle` (`FileHandle.nullDevice` too), or nil for the test process's own.
    public var standardOutput: Any?
    /// A `Pipe`, a `FileHandle` (`FileHandle.nullDevice` too), or nil for the test process's own.
    public var standardError: Any?

    /// The child's PID once `run()` returned; 0 before.
    public private(set) var processIdentifier: pid_t = 0
    /// The raw `waitpid` status once the child has been reaped, or
    /// `reapedElsewhere`.
    private let reapedStatus = Mutex<Int32?>(nil)
    /// Stands for the status of a child that something else in the process
    /// reaped (`waitpid` said ECHILD): its status is lost.
    private static let reapedElsewhere = Int32.min

    public init() {}

    /// Spawns the child.
    /// - Throws: `TestProcessError` naming what `posix_spawn` refused (a missing
    ///   executable, a missing working directory).
    public func run() throws {
        guard let executable = executableURL?.path else { throw TestProcessError("TestProcess: no executableURL") }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let streams: [(Any?, Int32, Int32)] = [(standardInput, 0, O_RDONLY), (standardOutput, 1, O_WRONLY), (standardError, 2, O_WRONLY)]
        for (stream, target, mode) in streams {
            switch stream {
            case nil: break
            case let pipe as Pipe:
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            case let handle as FileHandle where handle === FileHandle.nullDevice:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", mode, 0)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                throw TestProcessError("TestProcess: descriptor \(target) must be a Pipe, a FileHandle or nil")
            }
        }
        if let directory = currentDirectoryURL?.path {
            guard addChangeDirectory(&actions, directory) == 0 else {
                throw TestProcessError("TestProcess: posix_spawn_file_actions_addchdir_np failed")
            }
        }
        guard addCloseFrom(&actions, 3) == 0 else { throw TestProcessError("TestProcess: posix_spawn_file_actions_addclosefrom_np failed") }
        let argv = ([executable] + (arguments ?? [])).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environmentLines = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in environmentLines ?? [] { free(pointer) } }
        var pid = pid_t()
        let status = environmentLines.map { lines in
            lines.withUnsafeBufferPointer { posix_spawn(&pid, executable, &actions, &attributes, argv, UnsafeMutablePointer(mutating: $0.baseAddress)) }
        } ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw TestProcessError("posix_spawn \(executable): \(String(cString: strerror(status)))") }
        processIdentifier = pid
        // The child has its own copies; the parent keeps only its ends of the pipes.
        for (stream, target, _) in streams {
            guard let pipe = stream as? Pipe else { continue }
            try (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
        }
    }

    /// Whether the child still runs (reaping it, by its PID, once it has ended).
    public var isRunning: Bool {
        reapedStatus.withLock { reaped in
            guard reaped == nil, processIdentifier != 0 else { return false }
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == processIdentifier { reaped = status; return false }
            if result < 0 && errno == ECHILD { reaped = Self.reapedElsewhere; return false }
            return result == 0 || (result < 0 && errno == EINTR)
        }
    }

    /// Its exit code, or the number of the signal that ended it (as
    /// Foundation says it); -1 when something else reaped it (its status is
    /// lost: a test then fails on the value, not on a trap that ends every
    /// test). Read only once `isRunning` is false.
    public var terminationStatus: Int32 {
        guard let status = reapedStatus.withLock({ $0 }) else { preconditionFailure("the process has not ended") }
        if status == Self.reapedElsewhere { return -1 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Whether it exited or a signal ended it. Read only once `isRunning` is false.
    public var terminationReason: TerminationReason {
        guard let status = reapedStatus.withLock({ $0 }) else { preconditionFailure("the process has not ended") }
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// SIGTERM.
    public func terminate() { if processIdentifier != 0 { kill(processIdentifier, SIGTERM) } }
    /// SIGINT.
    public func interrupt() { if processIdentifier != 0 { kill(processIdentifier, SIGINT) } }

    /// Waits up to `seconds` for the process to end; if it has not, prints
    /// what it was doing (`printStacks`, unless `diagnose` is false),
    /// kills it (SIGKILL) and waits up to 10 s more.
    /// - Returns: whether it ended by itself within `seconds`.
    @discardableResult
    public func waitForExit(within seconds: Double = 60, diagnose: Bool = true) -> Bool {
        if whileRunning(upTo: seconds) { return true }
        if diagnose { printStacks(of: processIdentifier, after: seconds) }
        kill(processIdentifier, SIGKILL)
        _ = whileRunning(upTo: 10)
        return false
    }

    /// The exit status (or the signal) once the process has ended; nil while it runs.
    public var statusIfEnded: Int32? { isRunning ? nil : terminationStatus }

    private func whileRunning(upTo seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else { return false }
            usleep(5_000)
        }
        return true
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's
/// Glibc module does not declare: in the child, closes every descriptor
/// from `lowest` up. A child spawned without it keeps every descriptor of
/// the test process not marked close-on-exec (another test's pipe end,
/// whose reader then waits for an end of file while the child runs).
public func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
    closeFromFunction(actions, lowest)
}

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29), not declared
/// either: the child changes to `directory` before it runs its executable.
func addChangeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ directory: String) -> Int32 {
    changeDirectoryFunction(actions, directory)
}

private let closeFromFunction = glibcFunction("posix_spawn_file_actions_addclosefrom_np",
                                              as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
private let changeDirectoryFunction = glibcFunction("posix_spawn_file_actions_addchdir_np",
                                                    as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)

private func glibcFunction<Function>(_ name: String, as type: Function.Type) -> Function {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fatalError("this glibc lacks \(name)") }
    return unsafeBitCast(symbol, to: type)
}

/// What `TestProcess.run()` could not do.
public struct TestProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
