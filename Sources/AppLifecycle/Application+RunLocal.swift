extension Application {
    /// The app's value for `key` in this run, or nil (never set, or the app
    /// died since: run-local values die with the run).
    public subscript<Value>(runLocal key: RunLocalKey<Value>) -> Value? {
        currentRun?.locals[ObjectIdentifier(key)].flatMap { ($0 as? (AnyObject, Value))?.1 }
    }

    /// Sets the app's value for `key` in this run (nil removes it).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    public func setRunLocal<Value>(_ value: Value?, for key: RunLocalKey<Value>) throws(LifecycleError) {
        let run = try requireAppCode("setRunLocal")
        // The key is stored with its value so its identity cannot be reused.
        run.locals[ObjectIdentifier(key)] = value.map { (key as AnyObject, $0) }
    }
}
