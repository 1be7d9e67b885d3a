import Foundation

/// A first-in first-out queue that blocks consumers until an item arrives or the queue is closed. Its length is
/// bounded by the caller (the audit's in-flight semaphore), not here.
final class BlockingQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Items from `head` on are waiting; the slots before it are emptied as items are taken, so that the queue
    /// does not keep what it handed out (a batch of lines holds on to the input chunks it was cut from).
    private var items: [Element?] = []
    private var head = 0
    private var closed = false

    func push(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// The next item, or nil once the queue is closed and empty.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed { condition.wait() }
        guard head < items.count else { return nil }
        let item = items[head].take()
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Collects numbered pieces of work finished in any order and hands them out in order.
final class ReorderBuffer<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var finished: [Int: Element] = [:]
    private var total: Int?

    func put(_ sequence: Int, _ element: Element) {
        condition.lock()
        finished[sequence] = element
        condition.broadcast()
        condition.unlock()
    }

    /// Says that pieces `0..<count` are all there will be.
    func finish(count: Int) {
        condition.lock()
        total = count
        condition.broadcast()
        condition.unlock()
    }

    /// Piece `sequence`, waiting for it; nil when there is no such piece.
    func take(_ sequence: Int) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let element = finished.removeValue(forKey: sequence) { return element }
            if let total, sequence >= total { return nil }
            condition.wait()
        }
    }
}
