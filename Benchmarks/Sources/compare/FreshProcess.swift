import Glibc

/// A measurement made in a new process of this executable (`compare
/// WORDS...`), for rows whose cost grows with what earlier rows left in
/// this one: libuv's `uv_spawn` forks, and a fork copies the page tables
/// of the million-timers and 10^6-subject rows' heap.
enum FreshProcess {
    /// Runs `compare words...` and reads the numbers it printed.
    static func numbers(_ words: [String]) throws -> [Double] {
        var executable = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &executable, executable.count - 1)
        guard length > 0 else { throw BenchmarkFailure("cannot read /proc/self/exe") }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchmarkFailure("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let path = String(decoding: executable[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + words).map { strdup($0) } + [nil]
        defer { for word in argv { free(word) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, &argv, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else { throw BenchmarkFailure("posix_spawn failed: \(spawned)") }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = String(decoding: output, as: UTF8.self)
        guard status == 0 else { throw BenchmarkFailure("compare \(words.joined(separator: " ")) failed (status \(status)): \(text)") }
        return text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    }
}

/// A measurement went wrong (a loop lost a timer, a child run failed): the
/// run is wrong, not slow.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
