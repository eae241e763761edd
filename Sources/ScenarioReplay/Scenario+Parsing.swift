import AppLifecycle
import MainLoopJSON
import SystemNotifications

extension Scenario {
    /// Parses a scenario from JSON text.
    /// - Throws: ``ScenarioError`` with the step index and problem (the
    ///   file name is added by the caller that knows it).
    public static func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            throw ScenarioError(problem: "invalid JSON at \(error)")
        }
        return try parse(json)
    }

    /// Parses a scenario from a JSON value.
    public static func parse(_ json: JSONValue) throws(ScenarioError) -> Scenario {
        guard let root = json.objectValue else { throw ScenarioError(problem: "a scenario must be a JSON object") }
        try requireKnownKeys(root, ["name", "description", "config", "initial", "steps", "expect"], what: "scenario")
        var scenario = Scenario(name: root["name"]?.stringValue ?? "(unnamed)")
        if let config = root["config"] { try scenario.parseConfig(config) }
        if let initial = root["initial"] {
            guard let object = initial.objectValue else { throw ScenarioError(problem: "'initial' must be an object") }
            scenario.initial = object
        }
        guard let steps = root["steps"]?.arrayValue else { throw ScenarioError(problem: "'steps' must be an array") }
        var lastAt = -Double.infinity
        for (index, stepJSON) in steps.enumerated() {
            do throws(ScenarioError) {
                let step = try parseStep(stepJSON)
                guard step.at >= lastAt else {
                    throw ScenarioError(problem: "'at' \(JSONValue.format(step.at)) is before the previous step's \(JSONValue.format(lastAt))")
                }
                lastAt = step.at
                scenario.steps.append(step)
            } catch {
                throw ScenarioError(stepIndex: index, problem: error.problem)
            }
        }
        if let expect = root["expect"] {
            guard let lines = expect.arrayValue else { throw ScenarioError(problem: "'expect' must be an array") }
            scenario.expect = try lines.enumerated().map { (index, line) throws(ScenarioError) in
                guard let object = line.objectValue else { throw ScenarioError(problem: "expect[\(index)] must be an object") }
                return object
            }
        }
        return scenario
    }

    private mutating func parseConfig(_ json: JSONValue) throws(ScenarioError) {
        guard let config = json.objectValue else { throw ScenarioError(problem: "'config' must be an object") }
        try Self.requireKnownKeys(config, ["backgroundTaskLimit", "expirationLead", "didEnterBackgroundLimit",
                                           "backgroundModes", "expirationHandlerEndsTask", "customKinds"], what: "config")
        func seconds(_ key: String) throws(ScenarioError) -> Duration? {
            guard let value = config[key] else { return nil }
            guard let number = value.numberValue, number >= 0 else {
                throw ScenarioError(problem: "config '\(key)' must be a non-negative number of seconds")
            }
            return .seconds(fractional: number)
        }
        if let limit = try seconds("backgroundTaskLimit") { configuration.backgroundTaskLimit = limit }
        if let lead = try seconds("expirationLead") { configuration.expirationLead = lead }
        if let limit = try seconds("didEnterBackgroundLimit") { configuration.didEnterBackgroundLimit = limit }
        if let modes = config["backgroundModes"] {
            guard let list = modes.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw ScenarioError(problem: "config 'backgroundModes' must be an array of strings")
            }
            configuration.backgroundModes = Set(list.compactMap(\.stringValue).map { BackgroundMode($0) })
        }
        if let ends = config["expirationHandlerEndsTask"] {
            guard let flag = ends.boolValue else {
                throw ScenarioError(problem: "config 'expirationHandlerEndsTask' must be true or false")
            }
            expirationHandlerEndsTask = flag
        }
        if let kinds = config["customKinds"] {
            guard let list = kinds.arrayValue else { throw ScenarioError(problem: "config 'customKinds' must be an array") }
            customKinds = try list.enumerated().map { (index, json) throws(ScenarioError) in
                do throws(ScenarioError) {
                    return CustomKind(rule: try CustomKindParser.rule(from: json))
                } catch {
                    throw ScenarioError(problem: "config customKinds[\(index)]: \(error.problem)")
                }
            }
        }
    }

    private static func parseStep(_ json: JSONValue) throws(ScenarioError) -> Step {
        guard let object = json.objectValue else { throw ScenarioError(problem: "a step must be an object") }
        guard let at = object["at"]?.numberValue, at >= 0 else {
            throw ScenarioError(problem: "'at' must be a non-negative number")
        }
        let kinds = object.orderedKeys.filter { $0 != "at" }
        guard kinds.count == 1, let key = kinds.first, let body = object[key] else {
            throw ScenarioError(problem: "a step needs 'at' and exactly one of lifecycle, system, input, app (got \(kinds))")
        }
        switch key {
        case "lifecycle":
            guard let name = body.stringValue else { throw ScenarioError(problem: "'lifecycle' must be a string") }
            guard let command = LifecycleCommand(rawValue: name) else {
                let known = LifecycleCommand.allCases.map(\.rawValue).joined(separator: ", ")
                throw ScenarioError(problem: "unknown lifecycle command '\(name)' (known: \(known))")
            }
            return Step(at: at, action: .lifecycle(command))
        case "system":
            guard let event = body.objectValue, event.count == 1 else {
                throw ScenarioError(problem: "'system' must be an object with exactly one event kind")
            }
            return Step(at: at, action: .system(body))
        case "input":
            guard let id = body.stringValue else { throw ScenarioError(problem: "'input' must be a string") }
            return Step(at: at, action: .input(id))
        case "app":
            return Step(at: at, action: .app(try parseAppAction(body)))
        default:
            throw ScenarioError(problem: "unknown step kind '\(key)' (expected lifecycle, system, input or app)")
        }
    }

    private static func parseAppAction(_ json: JSONValue) throws(ScenarioError) -> AppAction {
        guard let object = json.objectValue, let name = object.orderedKeys.first, let value = object[name] else {
            throw ScenarioError(problem: "'app' must be an object naming one action")
        }
        func string() throws(ScenarioError) -> String {
            guard let string = value.stringValue else { throw ScenarioError(problem: "app '\(name)' needs a string") }
            return string
        }
        func number(_ key: String) throws(ScenarioError) -> Double {
            guard let number = object[key]?.numberValue, number >= 0 else {
                throw ScenarioError(problem: "app '\(name)' needs a non-negative number '\(key)'")
            }
            return number
        }
        func only(_ keys: [String]) throws(ScenarioError) {
            try requireKnownKeys(object, keys, what: "app '\(name)'")
        }
        switch name {
        case "beginBackgroundTask": try only([name]); return .beginBackgroundTask(name: try string())
        case "endBackgroundTask": try only([name]); return .endBackgroundTask(name: try string())
        case "post": try only([name]); return .post(label: try string())
        case "timer":
            let label = try string()
            if object["after"] != nil, object["every"] == nil {
                try only([name, "after"])
                return .timerAfter(label: label, seconds: try number("after"))
            }
            if object["every"] != nil, object["after"] == nil {
                try only([name, "every"])
                let every = try number("every")
                guard every > 0 else { throw ScenarioError(problem: "app 'timer' needs a positive 'every'") }
                return .timerEvery(label: label, seconds: every)
            }
            throw ScenarioError(problem: "app 'timer' needs exactly one of 'after' or 'every'")
        case "cancelTimer": try only([name]); return .cancelTimer(label: try string())
        case "startService": try only([name]); return .startService(mode: try string())
        case "stopService": try only([name]); return .stopService(mode: try string())
        case "setKeepAliveTimeout": try only([name]); return .setKeepAliveTimeout(seconds: try number(name))
        case "scheduleLocalNotification":
            try only([name, "after"])
            return .scheduleLocalNotification(label: try string(), seconds: try number("after"))
        case "blockMainThread": try only([name]); return .blockMainThread(seconds: try number(name))
        case "onDidEnterBackground":
            try only([name])
            guard let inner = value.objectValue, inner.count == 1, let block = inner["blockMainThread"]?.numberValue, block >= 0 else {
                throw ScenarioError(problem: "app 'onDidEnterBackground' must be {\"blockMainThread\": seconds}")
            }
            return .onDidEnterBackgroundBlock(seconds: block)
        default:
            throw ScenarioError(problem: "unknown app action '\(name)'")
        }
    }

    static func requireKnownKeys(_ object: JSONObject, _ known: [String], what: String) throws(ScenarioError) {
        if let unknown = object.orderedKeys.first(where: { !known.contains($0) }) {
            throw ScenarioError(problem: "unknown key '\(unknown)' in \(what) (known: \(known.joined(separator: ", ")))")
        }
    }
}
