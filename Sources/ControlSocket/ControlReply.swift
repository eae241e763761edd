import MainLoopJSON

/// The reply shapes the socket itself produces (for a request it cannot
/// hand to its handler: an over-long line, invalid UTF-8, a bad peer).
/// The socket knows nothing of what requests mean; a handler's replies are
/// its own, and `{"ok": false, "error": …}` is the shape clients such as
/// `mainloop ctl` read as a failure.
public enum ControlReply {
    /// `{"ok": true}`: a request done, with nothing more to say (a posted
    /// event, an input). One object shared by every such reply, so a
    /// connection writes its text, `{"ok":true}`, without printing it.
    public static let ok: JSONObject = ["ok": true]

    /// The line of ``ok``, newline included.
    static let okLine = Array(#"{"ok":true}"#.utf8) + [UInt8(ascii: "\n")]

    /// `{"ok": false, "error": message}`.
    public static func error(_ message: String) -> JSONObject {
        JSONObject(distinctKeys: [.init("ok", false), .init("error", .string(message))])
    }
}
