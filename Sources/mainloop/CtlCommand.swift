import ArgumentParser
import LinuxSystemEvents
import MainLoopJSON

/// `mainloop ctl`: sends one request to a running service.
struct CtlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Send a request to a running service's control socket and print the reply.",
        discussion: """
            REQUEST is raw JSON ('{"lifecycle":"home"}') or a shorthand:
              mainloop ctl home | launch | foreground | wake | terminate | ...   (lifecycle)
              mainloop ctl orientation landscapeLeft      (system event: KIND VALUE)
              mainloop ctl accessory '{"id":"dock","connected":true}'
              mainloop ctl input tap-1
              mainloop ctl state | stats | values         (queries)
            VALUE is read as JSON when it parses, otherwise as a string. The exit status is \
            non-zero when the reply is an error.
            """
    )

    @Option(help: "Control socket path (default: $XDG_RUNTIME_DIR/mainloop.sock or /tmp/mainloop-UID.sock).")
    var socket: String?

    @Argument(help: "The request: raw JSON or a shorthand (see above).")
    var request: [String]

    func run() throws {
        let json: JSONValue
        do {
            json = try CtlRequest.parse(request)
        } catch {
            throw ValidationError(error.description)
        }
        let reply: JSONObject
        do {
            reply = try ControlClient.send(json, to: socket ?? DefaultPaths.socket)
        } catch {
            Output.error("error: \(error)")
            throw ExitCode(2)
        }
        Output.json(reply)
        if reply["ok"] != .bool(true) { throw ExitCode(1) }
    }
}

/// Turns `ctl` arguments into a request object.
enum CtlRequest {
    struct Problem: Error, CustomStringConvertible { let description: String }

    static let lifecycleCommands: Set<String> = ["launch", "launchInBackground", "interrupt", "resumeFromInterrupt",
                                                 "home", "foreground", "wake", "terminate", "purge"]
    static let queries: Set<String> = ["state", "stats", "values"]

    static func parse(_ words: [String]) throws(Problem) -> JSONValue {
        guard let first = words.first else { throw Problem(description: "missing request") }
        if first.hasPrefix("{") {
            do { return try JSONValue.parse(words.joined(separator: " ")) } catch {
                throw Problem(description: "invalid JSON request: \(error)")
            }
        }
        if words.count == 1, lifecycleCommands.contains(first) { return ["lifecycle": .string(first)] }
        if words.count == 1, queries.contains(first) { return ["query": .string(first)] }
        if first == "input", words.count == 2 { return ["input": .string(words[1])] }
        if words.count == 2 { return ["system": .object(JSONObject([(first, value(words[1]))]))] }
        throw Problem(description: "unrecognised request \(words); see 'mainloop ctl --help'")
    }

    /// JSON when it parses (`14`, `true`, `"dark"`, `[1,2]`), else a string.
    static func value(_ text: String) -> JSONValue {
        (try? JSONValue.parse(text)) ?? .string(text)
    }
}
