import Glibc
import MainLoop
import Testing
import TestSupport

/// The one parser of inotify records that path sources and `FileWatcher`
/// share: records as the kernel lays them out, and as a real inotify
/// descriptor returns them.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct InotifyRecordTests {
    /// A record as the kernel writes it: the name NUL-padded to `padTo`.
    private func record(_ watch: Int32, _ mask: UInt32, _ name: String, padTo: Int = 0) -> [UInt8] {
        var nameBytes = Array(name.utf8)
        if !nameBytes.isEmpty || padTo > 0 { nameBytes += [UInt8](repeating: 0, count: max(padTo - nameBytes.count, 1)) }
        var bytes: [UInt8] = []
        withUnsafeBytes(of: watch) { bytes += $0 }
        withUnsafeBytes(of: mask) { bytes += $0 }
        withUnsafeBytes(of: UInt32(0)) { bytes += $0 }
        withUnsafeBytes(of: UInt32(nameBytes.count)) { bytes += $0 }
        return bytes + nameBytes
    }

    private func parsed(_ bytes: [UInt8]) -> [InotifyRecord] {
        var records: [InotifyRecord] = []
        bytes.withUnsafeBytes { InotifyRecord.forEach(in: $0) { records.append($0) } }
        return records
    }

    @Test func recordsAreReadInOrderWithTheirNamesUpToTheFirstNUL() {
        let bytes = record(3, UInt32(IN_CREATE), "settings.json", padTo: 16)
            + record(3, UInt32(IN_DELETE_SELF), "")
            + record(7, UInt32(IN_MOVED_TO), "a", padTo: 16)
        #expect(parsed(bytes) == [
            InotifyRecord(watchDescriptor: 3, mask: UInt32(IN_CREATE), name: "settings.json"),
            InotifyRecord(watchDescriptor: 3, mask: UInt32(IN_DELETE_SELF), name: ""),
            InotifyRecord(watchDescriptor: 7, mask: UInt32(IN_MOVED_TO), name: "a"),
        ])
    }

    /// A record whose name runs past the bytes read is not reported (nor
    /// its cut-off header), and nothing is read past the buffer.
    @Test func aRecordCutOffAtTheEndIsNotReported() {
        let whole = record(1, UInt32(IN_MODIFY), "kept", padTo: 16)
        let cut = record(2, UInt32(IN_MODIFY), "cut off", padTo: 16)
        #expect(parsed(whole + cut.dropLast(3)) == [InotifyRecord(watchDescriptor: 1, mask: UInt32(IN_MODIFY), name: "kept")])
        #expect(parsed(whole + cut.prefix(10)).count == 1)
        #expect(parsed([]).isEmpty)
    }

    @Test func aQueueOverflowIsRecognised() {
        let records = parsed(record(-1, UInt32(IN_Q_OVERFLOW), ""))
        #expect(records.count == 1)
        #expect(records.first?.isQueueOverflow == true)
        #expect(parsed(record(1, UInt32(IN_CREATE), "x", padTo: 16)).first?.isQueueOverflow == false)
    }

    /// A real inotify descriptor: the reader stops at an empty queue, and
    /// takes at most its reads per turn, leaving the rest queued.
    @Test func theReaderReadsWhatIsQueuedAtMostItsReadsPerTurn() {
        let directory = PathSourceTests.Scratch()
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        #expect(inotify >= 0)
        defer { close(inotify) }
        let watch = inotify_add_watch(inotify, directory.path, UInt32(IN_CREATE))
        #expect(watch >= 0)
        // Each record here is 16 bytes and a name padded to 16: 32 bytes, so
        // 16 KiB holds 512; 600 files need two reads.
        for index in 0..<600 { PathSourceTests.write("", to: directory("file-\(index)")) }
        var reader = InotifyRecordReader(readsPerTurn: 1)
        var names: [String] = []
        reader.readQueued(from: inotify) { record in
            #expect(record.watchDescriptor == watch)
            names.append(record.name)
        }
        #expect(names.count == 512)
        #expect(names.first == "file-0")
        reader.readQueued(from: inotify) { names.append($0.name) }
        #expect(names.count == 600)
        #expect(names.last == "file-599")
        reader.readQueued(from: inotify) { names.append($0.name) }
        #expect(names.count == 600, "an empty queue ends the turn")
    }
}
