import FileSupport
import Glibc
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct AtomicFileTests {
    /// A path split into its directory and name joins back to itself (a
    /// bare name to `./name`), at the root too.
    @Test func joinPutsBackWhatSplitTookApart() {
        for (path, joined) in [("/etc/default/locale", "/etc/default/locale"), ("/locale", "/locale"), ("locale", "./locale"),
                               ("dir/name", "dir/name")] {
            let (directory, name) = AtomicFile.split(path)
            #expect(AtomicFile.join(directory, name) == joined)
        }
    }

    @Test func replacesTheFileWholeAndLeavesNoTemporaryBehind() throws {
        var template = Array("/tmp/mainloop-atomic-XXXXXX".utf8CString)
        let directory = String(cString: mkdtemp(&template)!)
        let path = directory + "/state.json"
        try AtomicFile.write("{\"v\":1}", to: path)
        try AtomicFile.write("{\"v\":2}", to: path)
        let fd = open(path, O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, 64)
        close(fd)
        #expect(String(decoding: buffer[0..<max(0, count)], as: UTF8.self) == "{\"v\":2}")
        let names = DirectoryNames.list(directory) { $0 != "." && $0 != ".." }
        #expect(names == ["state.json"])
        #expect(throws: AtomicFile.WriteError.self) { try AtomicFile.write("x", to: directory + "/missing/dir/file") }
    }
}
