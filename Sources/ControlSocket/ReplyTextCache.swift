import MainLoopJSON

/// The line a server printed last for a short reply, kept with its object:
/// a handler that answers with the very same object again (a responder's
/// unchanged `state` reply, a constant of your own) has the line copied,
/// not printed again. "The very same" is ``/MainLoopJSON/JSONObject/isIdentical(to:)``:
/// one storage, which the kept copy holds alive, so one text. One per
/// server, shared by its connections (a supervisor that connects for each
/// query still hits). Loop thread only.
final class ReplyTextCache {
    /// Replies up to this many bytes, newline included, are kept: keeping a
    /// short line costs one copy of it, and a large reply (stats, metrics)
    /// is not copied for a hit that rarely comes.
    static let maxLineBytes = 1024

    /// Unchecked exclusivity: reached only from a connection's handling on
    /// the loop thread, never re-entered while a line is appended (the
    /// checks' cost: the `query` row of Benchmarks/socket/instructions.sh).
    @exclusivity(unchecked) private var object: JSONObject?
    @exclusivity(unchecked) private var line: [UInt8] = []

    /// Appends the kept line when `reply` is its object and the line fits
    /// `maxBytes` (newline not counted); false otherwise.
    func appendLine(of reply: JSONObject, to storage: inout [UInt8], maxBytes: Int) -> Bool {
        guard let object, object.isIdentical(to: reply), line.count - 1 <= maxBytes else { return false }
        storage.append(contentsOf: line)
        return true
    }

    /// Keeps `printed` (a whole line, newline included) as `reply`'s text,
    /// if it is short.
    func remember(_ reply: JSONObject, line printed: ArraySlice<UInt8>) {
        guard printed.count <= Self.maxLineBytes else { return }
        object = reply
        line.removeAll(keepingCapacity: true)
        line.append(contentsOf: printed)
    }
}
