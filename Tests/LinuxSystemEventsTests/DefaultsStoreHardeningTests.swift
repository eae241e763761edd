import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing
import TestSupport

/// The defaults store never loses or mangles what a file
/// holds, and never follows a link it should not.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct DefaultsStoreHardeningTests {
    /// Invalid UTF-8 was read lossily (U+FFFD) and silently rewritten on the
    /// next write, collapsing two keys into one. Such a file is corrupt now:
    /// reported, and never rewritten.
    @Test func aFileWithInvalidUTF8IsCorruptAndNeverRewritten() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("d.json")
        // A key with an invalid byte: read lossily it became "a\u{FFFD}".
        let raw: [UInt8] = Array(#"{"a"#.utf8) + [0xFF] + Array(#"":1,"b":2}"#.utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(raw)))
        let store = UserDefaultsStore(path: path)
        #expect(throws: UserDefaultsError.self) { try store.dictionary() }
        #expect(throws: UserDefaultsError.self) { try store.set(.number(3), forKey: "b") }
        #expect(FileManager.default.contents(atPath: path) == Data(raw), "the file is untouched")
    }

    /// Integers beyond 2^53 keep their exact digits through a rewrite.
    @Test func bigIntegersSurviveARewriteExactly() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("d.json")
        try #"{"big":9007199254740993,"bigger":123456789012345678901234567890}"#.write(toFile: path, atomically: true, encoding: .utf8)
        let store = UserDefaultsStore(path: path)
        try store.set(.bool(true), forKey: "flag")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("9007199254740993") && text.contains("123456789012345678901234567890"), "\(text)")
    }

    /// A writer killed mid-write leaves `FILE.tmp-PID-N`; the next writer
    /// removes temporaries whose process is gone.
    @Test func temporariesOfDeadWritersAreCleanedUp() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("d.json")
        let stale = path + ".tmp-999999-42"  // no such pid
        #expect(FileManager.default.createFile(atPath: stale, contents: Data("{".utf8)))
        let live = path + ".tmp-\(getpid())-7"  // a live writer's (ours)
        #expect(FileManager.default.createFile(atPath: live, contents: Data("{".utf8)))
        try UserDefaultsStore(path: path).set(.number(1), forKey: "a")
        #expect(!FileManager.default.fileExists(atPath: stale), "a dead writer's temporary is removed")
        #expect(FileManager.default.fileExists(atPath: live), "a live writer's is not")
        unlink(live)
    }

    /// The lock file is never created through a symlink (another user could
    /// point it at a file of yours).
    @Test func theLockFileDoesNotFollowASymlink() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("d.json")
        let victim = directory.file("victim")
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8)))
        symlink(victim, path + ".lock")
        #expect(throws: UserDefaultsError.self) { try UserDefaultsStore(path: path).set(.number(1), forKey: "a") }
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
    }

    /// Decided: a defaults file that is a symlink is refused for writing
    /// (a rename would silently replace the link with a copy); reading
    /// follows it.
    @Test func aSymlinkedDefaultsFileIsReadButNotReplaced() throws {
        let directory = TemporaryDirectory()
        let target = directory.file("real.json"), path = directory.file("d.json")
        try #"{"a":1}"#.write(toFile: target, atomically: true, encoding: .utf8)
        symlink(target, path)
        let store = UserDefaultsStore(path: path)
        #expect(try store.value(forKey: "a") == .number(1))
        #expect(throws: UserDefaultsError.self) { try store.set(.number(2), forKey: "a") }
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
    }

    /// A rewrite keeps the file's mode (and owner, when we may set it).
    @Test func aRewriteKeepsTheFilesMode() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("d.json")
        try #"{"a":1}"#.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o640)
        try UserDefaultsStore(path: path).set(.number(2), forKey: "a")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o640)
    }
}
