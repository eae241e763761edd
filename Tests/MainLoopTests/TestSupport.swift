import Glibc
import MainLoop
import Synchronization

/// Records strings in order (loop thread only, so no lock).
final class Recorder {
    var entries: [String] = []
    func callAsFunction(_ entry: String) { entries.append(entry) }
}
