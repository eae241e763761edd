import FileSupport
import Glibc
import MainLoop
import SystemNotifications

/// Posts `currentLocaleDidChange` when the system locale changes.
///
/// The locale comes from a configurable file in /etc/default/locale form
/// (`LANG=fr_FR.UTF-8`; `LC_ALL` wins over `LANG`), watched with inotify.
/// When the file names no locale, the process's `LC_ALL`/`LANG` at start
/// are used. `fr_FR.UTF-8@euro` becomes the identifier `fr_FR`; the POSIX
/// locales `C` and `POSIX` become `en_US_POSIX`, as on Apple platforms.
///
/// The file is read only when it is a regular file of at most
/// ``maxFileBytes`` (see ``/FileSupport/FileContents/regularFileBytes(_:maxBytes:)``):
/// replaced by a FIFO, a device, a directory or a huge file, it is
/// reported through `onProblem` and the last good identifier stays. A file
/// that is removed, or names no locale, means the process's own locale.
/// Loop thread only; may be released on any thread (it stops watching on the loop).
public final class LocaleSource {
    /// The file watched.
    public let path: String
    /// The identifier last read.
    public private(set) var identifier: String
    private let fallback: String
    private let post: (SystemEvent) -> Void
    private let onProblem: (FileContents.RefusalReason) -> Void
    /// The largest locale file read (a real one is a few lines).
    public static let maxFileBytes = 64 * 1024
    private let watcher: FileWatcher
    private var watch: FileWatcher.Token?

    /// - Parameters:
    ///   - path: the locale file.
    ///   - watcher: watches it.
    ///   - onProblem: a file that is there but was not read (not a regular
    ///     file, too large, unreadable); the last good identifier stays.
    ///     Called on every re-read that finds it so: rate-limit what you log.
    ///   - post: receives `locale` events on the loop thread.
    public init(path: String = "/etc/default/locale", watcher: FileWatcher,
                onProblem: @escaping (FileContents.RefusalReason) -> Void = { _ in },
                post: @escaping (SystemEvent) -> Void) throws(MainLoopError) {
        self.path = path
        self.post = post
        self.onProblem = onProblem
        fallback = Self.identifier(fromEnvironmentValue: ProcessEnvironment.value("LC_ALL") ?? ProcessEnvironment.value("LANG") ?? "C")
        identifier = Self.current(path, fallback: fallback, onProblem: onProblem) ?? fallback
        self.watcher = watcher
        watch = try watcher.watch(path) { [weak self] in self?.reload() }
    }

    deinit {
        guard let watch else { return }
        watcher.loop.releaseOnLoop((watcher, watch)) { watcher, watch in watcher.unwatch(watch) }
    }

    /// Re-reads the file and posts the identifier if it changed.
    public func reload() {
        guard let current = Self.current(path, fallback: fallback, onProblem: onProblem), current != identifier
        else { return }
        identifier = current
        post(.locale(current))
    }

    /// The identifier now (the file's, else `fallback`), or nil when the
    /// file is there but was not read (then `onProblem` heard why).
    private static func current(_ path: String, fallback: String,
                                onProblem: (FileContents.RefusalReason) -> Void) -> String? {
        switch read(path) {
        case .success(let named): return named ?? fallback
        case .failure(let problem):
            onProblem(problem)
            return nil
        }
    }

    /// The identifier a locale file names (LC_ALL over LANG), nil when it
    /// names none or is absent, or why it was not read.
    static func read(_ path: String) -> Result<String?, FileContents.RefusalReason> {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.regularFileBytes(path, maxBytes: maxFileBytes)
        } catch {
            return error.isMissing ? .success(nil) : .failure(error)
        }
        return .success(identifier(inLocaleFile: String(decoding: bytes, as: UTF8.self)))
    }

    /// The identifier the text of a locale file names (LC_ALL over LANG), or nil.
    static func identifier(inLocaleFile text: String) -> String? {
        var values: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = String(trimmed[..<equals])
            var value = String(trimmed[trimmed.index(after: equals)...]).trimmingWhitespace()
            if value.count >= 2, let first = value.first, first == value.last, first == "\"" || first == "'" {
                value = String(value.dropFirst().dropLast())
            }
            values[key] = value
        }
        guard let raw = values["LC_ALL"].flatMap({ $0.isEmpty ? nil : $0 }) ?? values["LANG"].flatMap({ $0.isEmpty ? nil : $0 })
        else { return nil }
        return identifier(fromEnvironmentValue: raw)
    }

    /// `fr_FR.UTF-8@euro` → `fr_FR`; `C`/`POSIX` → `en_US_POSIX`.
    static func identifier(fromEnvironmentValue value: String) -> String {
        let base = String(value.prefix { $0 != "." && $0 != "@" })
        return base == "C" || base == "POSIX" || base.isEmpty ? "en_US_POSIX" : base
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension LocaleSource: Sendable {}
