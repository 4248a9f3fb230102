/// A mutex whose storage is heap-allocated, so its address is stable (a `pthread_mutex_t` stored
/// in a class and passed with `&` is not guaranteed to be): the one lock of the package.
package final class Lock: @unchecked Sendable {
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value behind a `Lock`.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value
    package init(_ value: Value) { self.value = value }
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}

/// A condition variable used with a `Lock` (heap-allocated too): `wait` releases the lock while it
/// waits and holds it again when it returns.
package final class Condition: @unchecked Sendable {
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Waits for a `broadcast`; call with `lock` held, and check the awaited state in a loop.
    package func wait(_ lock: Lock) { pthread_cond_wait(condition, lock.mutex) }
    package func broadcast() { pthread_cond_broadcast(condition) }
}
