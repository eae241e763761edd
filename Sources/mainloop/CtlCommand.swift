import MainLoopKit

/// `mainloop ctl`: sends one request to a running service.
struct CtlCommand {
    static let spec = CommandSpec(
        name: "ctl",
        abstract: "Send a request to a running service's control socket and print the reply.",
        discussion: """
            REQUEST is raw JSON ('{"lifecycle":"home"}') or a shorthand:
              mainloop ctl home | launch | foreground | wake | terminate | ...   (lifecycle)
              mainloop ctl orientation landscapeLeft      (system event: KIND VALUE)
              mainloop ctl accessory '{"id":"dock","connected":true}'
              mainloop ctl input tap-1
              mainloop ctl app '{"timer":"tick","every":1}'   (app action: the app mainloop run records)
              mainloop ctl state | stats | values | metrics   (queries; metrics prints Prometheus text)
              mainloop ctl lifecycle home | query state | system KIND VALUE   (explicit forms)
            VALUE is read as JSON when it parses, otherwise as a string. The exit status is \
            non-zero when the reply is an error.
            """,
        options: [
            .value("socket", "path", "Control socket path (default: $XDG_RUNTIME_DIR/mainloop.sock, else mainloop.sock in the private directory ${TMPDIR:-/tmp}/mainloop-UID)."),
            .value("timeout", "seconds", "The deadline for the whole exchange, in seconds: connecting, sending and the complete reply.",
                   default: "5"),
        ],
        arguments: "<request> ...",
        argumentsHelp: "The request: raw JSON or a shorthand (see above)."
    )

    let socket: String?
    let timeout: Duration
    let request: [String]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        socket = arguments.string("socket")
        let seconds = try arguments.double("timeout")
        // A day is far past any reply a service gives; the bound keeps the
        // conversion to a Duration and to poll's milliseconds exact.
        guard seconds > 0, seconds <= 86_400 else {
            throw UsageError("--timeout must be more than 0 and at most 86400 seconds, not \(seconds)")
        }
        timeout = .nanoseconds(Int64((seconds * 1e9).rounded()))
        request = arguments.arguments
    }

    func run() throws {
        let json: JSONValue
        do {
            json = try CtlRequest.parse(request)
        } catch {
            // Said plainly: a pointer to the help adds nothing to what was
            // wrong with the request.
            Output.error("error: \(error.description)")
            throw ExitCode(64)  // EX_USAGE
        }
        let reply: JSONObject
        do {
            reply = try ControlClient.send(json, to: socket ?? DefaultSocketPath.resolve(creating: false), timeout: timeout)
        } catch {
            Output.error("error: \(error)")
            throw ExitCode(2)
        }
        // The metrics query's text is printed as it is, ready for a scraper.
        if json.objectValue?["query"] == .string(EngineQuery.metrics.rawValue), reply["ok"] == .bool(true),
           case .string(let text)? = reply["text"] {
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
            return
        }
        Output.json(reply)
        if reply["ok"] != .bool(true) { throw ExitCode(1) }
    }
}

/// Turns `ctl` arguments into a request object, checked by the same
/// decoder the service uses (system events are checked by the service,
/// which knows its kinds).
enum CtlRequest {
    static func parse(_ words: [String]) throws(RequestError) -> JSONValue {
        guard let first = words.first else { throw RequestError("missing request; see 'mainloop ctl --help'") }
        let request = try shorthand(words, first: first)
        guard let object = request.objectValue else {
            throw RequestError("a request is a JSON object with exactly one of lifecycle, system, input, memoryWarning, app, query")
        }
        _ = try RequestDecoder.decode(object, context: .controlSocket)
        return request
    }

    private static func shorthand(_ words: [String], first: String) throws(RequestError) -> JSONValue {
        if first.hasPrefix("{") {
            do { return try JSONValue.parse(words.joined(separator: " ")) } catch {
                throw RequestError("invalid JSON request: \(error)")
            }
        }
        switch (first, words.count) {
        case ("lifecycle", 2), ("query", 2), ("input", 2):
            return .object(JSONObject([(first, .string(words[1]))]))
        case ("app", 2):
            return ["app": value(words[1])]
        case ("system", 3):
            return ["system": .object(JSONObject([(words[1], value(words[2]))]))]
        case ("lifecycle", _), ("query", _), ("input", _), ("app", _):
            throw RequestError("'\(first)' takes one argument: mainloop ctl \(first) VALUE")
        case ("system", _):
            throw RequestError("'system' takes a kind and a value: mainloop ctl system KIND VALUE")
        case (_, 1) where LifecycleCommand(rawValue: first) != nil:
            return ["lifecycle": .string(first)]
        case (_, 1) where EngineQuery(rawValue: first) != nil:
            return ["query": .string(first)]
        case (_, 1):
            throw RequestError("'\(first)' is not a lifecycle command or a query; a system event needs a value: "
                               + "mainloop ctl KIND VALUE")
        case (_, 2):
            return ["system": .object(JSONObject([(first, value(words[1]))]))]
        default:
            throw RequestError("unrecognised request \(words.joined(separator: " ")); see 'mainloop ctl --help'")
        }
    }

    /// JSON when it parses (`14`, `true`, `"dark"`, `[1,2]`), else a string.
    static func value(_ text: String) -> JSONValue {
        do { return try JSONValue.parse(text) } catch { return .string(text) }
    }
}
