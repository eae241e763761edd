import AppLifecycle
import MainLoopJSON

/// Decodes the BEHAVIOUR.md §7 request vocabulary, once, for every place that
/// reads it: scenario steps (the replay), control-socket lines (the
/// service) and `mainloop ctl` (which checks a request before sending it).
/// Each form's errors are worded here and nowhere else.
public enum RequestDecoder {
    /// Decodes a request: an object with exactly one of the context's forms
    /// (for a scenario step, the step without its `at`).
    /// - Throws: ``RequestError`` saying what is wrong.
    public static func decode(_ object: JSONObject, context: RequestContext) throws(RequestError) -> EngineRequest {
        // The one member, read in place (a request a line: no array of its keys).
        guard object.count == 1, let (key, body) = object.first(where: { _ in true }) else {
            let keys = object.orderedKeys
            let got = keys.isEmpty ? "nothing" : keys.map { "'\($0)'" }.joined(separator: ", ")
            throw RequestError("a request needs exactly one of \(list(context.forms)) (got \(got))")
        }
        guard context.accepts(key) else {
            let known = ["lifecycle", "system", "input", "memoryWarning", "app", "query"]
            if known.contains(key) {
                throw RequestError("'\(key)' is not allowed here (expected one of \(list(context.forms)))")
            }
            throw RequestError("unknown request '\(key)' (expected one of \(list(context.forms)))")
        }
        // The commonest first (see `RequestContext.accepts`).
        switch key {
        case "system":
            guard let event = body.objectValue, event.count == 1 else {
                throw RequestError("'system' must be an object with exactly one event kind, e.g. {\"orientation\": \"faceUp\"}")
            }
            return .system(body)
        case "query":
            guard let name = body.stringValue, let query = Self.query(named: name) else {
                throw RequestError("unknown query \(body.jsonText) (known: \(list(EngineQuery.allCases.map(\.rawValue))))")
            }
            return .query(query)
        case "input":
            guard let id = body.stringValue else { throw RequestError("'input' must be a string (a touch id)") }
            return .input(id)
        case "lifecycle": return .lifecycle(try lifecycleCommand(body))
        case "memoryWarning":
            guard body == .bool(true) else { throw RequestError("'memoryWarning' must be true") }
            return .memoryWarning
        default:
            let action = try appAction(body)
            if case .controlSocket = context {
                switch action {
                case .blockMainThread, .onDidEnterBackgroundBlock:
                    throw RequestError("app '\(action.name)' is a scenario step: a running service's main thread "
                                       + "is busy with its own work, not on request")
                default: break
                }
            }
            return .app(action)
        }
    }

    /// A lifecycle command by name.
    public static func lifecycleCommand(_ json: JSONValue) throws(RequestError) -> LifecycleCommand {
        guard let name = json.stringValue, let command = LifecycleCommand(rawValue: name) else {
            throw RequestError("unknown lifecycle command \(json.jsonText) (known: \(list(LifecycleCommand.allCases.map(\.rawValue))))")
        }
        return command
    }

    /// An app action: an object naming one action (BEHAVIOUR.md §7).
    public static func appAction(_ json: JSONValue) throws(RequestError) -> AppAction {
        guard let object = json.objectValue, let name = object.orderedKeys.first, let value = object[name] else {
            throw RequestError("'app' must be an object naming one action")
        }
        func string() throws(RequestError) -> String {
            guard let string = value.stringValue else { throw RequestError("app '\(name)' needs a string") }
            return string
        }
        func only(_ keys: [String]) throws(RequestError) {
            try requireKnownKeys(object, keys, what: "app '\(name)'")
        }
        switch name {
        case "beginBackgroundTask": try only([name]); return .beginBackgroundTask(name: try string())
        case "endBackgroundTask": try only([name]); return .endBackgroundTask(name: try string())
        case "post": try only([name]); return .post(label: try string())
        case "timer":
            let label = try string()
            switch (object["after"], object["every"]) {
            case (.some(let after), nil):
                try only([name, "after"])
                return .timerAfter(label: label, delay: try SpecTime.duration(after, field: "after"))
            case (nil, .some(let every)):
                try only([name, "every"])
                return .timerEvery(label: label, interval: try SpecTime.duration(every, field: "every", positive: true))
            default:
                throw RequestError("app 'timer' needs exactly one of 'after' or 'every'")
            }
        case "cancelTimer": try only([name]); return .cancelTimer(label: try string())
        case "startService": try only([name]); return .startService(mode: try string())
        case "stopService": try only([name]); return .stopService(mode: try string())
        case "setKeepAliveTimeout":
            try only([name])
            return .setKeepAliveTimeout(try SpecTime.duration(value, field: name))
        case "scheduleLocalNotification":
            try only([name, "after"])
            return .scheduleLocalNotification(label: try string(), delay: try SpecTime.duration(object["after"], field: "after"))
        case "blockMainThread":
            try only([name])
            return .blockMainThread(try SpecTime.duration(value, field: name))
        case "onDidEnterBackground":
            try only([name])
            guard let inner = value.objectValue, inner.count == 1, let block = inner["blockMainThread"] else {
                throw RequestError("app 'onDidEnterBackground' must be {\"blockMainThread\": seconds}")
            }
            return .onDidEnterBackgroundBlock(try SpecTime.duration(block, field: "blockMainThread"))
        case "submitScheduledTask":
            try only([name, "kind", "after", "requiresExternalPower", "requiresNetworkConnectivity"])
            return .submitScheduledTask(try scheduledTaskRequest(object, identifier: try string()))
        case "cancelScheduledTask": try only([name]); return .cancelScheduledTask(identifier: try string())
        case "completeScheduledTask":
            try only([name, "success"])
            guard let success = object["success"].map({ $0.boolValue }) ?? true else {
                throw RequestError("app 'completeScheduledTask': 'success' must be true or false")
            }
            return .completeScheduledTask(identifier: try string(), success: success)
        default:
            throw RequestError("unknown app action '\(name)'")
        }
    }

    /// The request of a `submitScheduledTask` action: `kind` is
    /// `appRefresh` or `processing`, `after` the earliest begin (0 if
    /// absent), and a processing task's two conditions (false if absent).
    static func scheduledTaskRequest(_ object: JSONObject, identifier: String) throws(RequestError) -> ScheduledTaskRequest {
        let kinds = ScheduledTaskRequest.Kind.allCases.map(\.rawValue)
        guard let name = object["kind"]?.stringValue, let kind = ScheduledTaskRequest.Kind(rawValue: name) else {
            throw RequestError("app 'submitScheduledTask' needs a 'kind', one of \(list(kinds))")
        }
        let after = try object["after"].map { value throws(RequestError) in try SpecTime.duration(value, field: "after") } ?? .zero
        func flag(_ key: String) throws(RequestError) -> Bool {
            guard let value = object[key] else { return false }
            guard let flag = value.boolValue else { throw RequestError("app 'submitScheduledTask': '\(key)' must be true or false") }
            guard kind == .processing || !flag else {
                throw RequestError("app 'submitScheduledTask': '\(key)' is for a processing task, not an app refresh")
            }
            return flag
        }
        let power = try flag("requiresExternalPower"), network = try flag("requiresNetworkConnectivity")
        switch kind {
        case .appRefresh: return .appRefresh(identifier, earliestBeginAfter: after)
        case .processing:
            return .processing(identifier, earliestBeginAfter: after, requiresExternalPower: power,
                               requiresNetworkConnectivity: network)
        }
    }

    /// Fails on the first key not in `known`.
    public static func requireKnownKeys(_ object: JSONObject, _ known: [String], what: String) throws(RequestError) {
        if let unknown = object.orderedKeys.first(where: { !known.contains($0) }) {
            throw RequestError("unknown key '\(unknown)' in \(what) (known: \(known.joined(separator: ", ")))")
        }
    }

    static func list(_ names: [String]) -> String { names.joined(separator: ", ") }

    /// The query `name` names. `state` (what a supervisor polls) is tested
    /// first with one inline compare; `init(rawValue:)` searches the cases
    /// through the standard library's string switch, which costs more.
    static func query(named name: String) -> EngineQuery? {
        name == "state" ? .state : EngineQuery(rawValue: name)
    }
}
