// The inverse relationship of Realm's "Model Relationships" page
// (../shared/seeds/model-relationships.txt) with Realm replaced by Reef: User and Task, verbatim,
// with a LinkingObjects backlink from each task to the users whose `tasks` hold it.
//
//   swift run UserTasks [directory]
//
// It works in `directory` (default: $TMPDIR/reef-examples/UserTasks), which it empties first,
// opens `default.reef` there, and ends by writing the store's collections as a mongodump
// directory, `dump/`.
//
// A Swift 6 trap: this model is named `Task`, so in this module `Task` is the model, not Swift
// concurrency's `Task`. `Task { await work() }` stops compiling here (Task has no such
// initializer); write `_Concurrency.Task { ... }` (or `Swift.Task`) for the concurrency one, or
// keep models named `Task` in a module of their own. Reef's own API never names a type `Task`.
import ReefStore
import ReefSwift

// MARK: The page's models

class User: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var _partition: String = ""
  @Persisted var name: String = ""
  // A user can have many tasks.
  @Persisted var tasks: List<Task>
}

class Task: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var _partition: String = ""
  @Persisted var text: String = ""
  // Backlink to the user. This is automatically updated whenever
  // this task is added to or removed from a user's task list.
  @Persisted(originProperty: "tasks") var assignee: LinkingObjects<User>
}

// MARK: A fresh directory

let directory = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "reef-examples/UserTasks"
try? FileManager.default.removeItem(atPath: directory)
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
_ = FileManager.default.changeCurrentDirectoryPath(directory)
print("Working in \(directory)")

let reef = try Reef()

func makeTask(_ text: String, _ id: String) -> Task {
  let task = Task()
  task._id = ObjectId(id)!
  task._partition = "team"
  task.text = text
  return task
}

func makeUser(_ name: String, _ id: String) -> User {
  let user = User()
  user._id = ObjectId(id)!
  user._partition = "team"
  user.name = name
  return user
}

// MARK: The backlink follows the lists

print("\n== Adding users adds their tasks; each task knows its assignees")
let alice = makeUser("Alice", "64b7f1a2c3d4e5f601000001")
let bruno = makeUser("Bruno", "64b7f1a2c3d4e5f601000002")
let design = makeTask("Design the schema", "64b7f1a2c3d4e5f602000001")
let review = makeTask("Review the pull request", "64b7f1a2c3d4e5f602000002")
let release = makeTask("Tag the release", "64b7f1a2c3d4e5f602000003")
alice.tasks.append(objectsIn: [design, review])
bruno.tasks.append(review)
try reef.write { reef.add([alice, bruno]) }
try reef.write { reef.add(release) }

func show(_ reef: Reef) {
  for task in reef.objects(Task.self).sorted(byKeyPath: "text") {
    let names = task.assignee.map(\.name).sorted()
    print("  \(task.text): \(names.isEmpty ? "nobody" : names.joined(separator: ", "))")
  }
}
show(reef)

print("\n== Appending to a list and removing from it update the backlink")
try reef.write {
  bruno.tasks.append(release)
  alice.tasks.remove(at: 1)  // review
}
show(reef)

print("\n== Queries through the list")
let reviewers = reef.objects(User.self).filter("ANY tasks.text BEGINSWITH %@", "Review")
print("Users with a review task: \(reviewers.map(\.name))")
print("Users with two tasks or more: \(reef.objects(User.self).filter("tasks.@count >= 2").map(\.name))")

print("\n== Deleting a task removes it from every list")
try reef.write { reef.delete(review) }
print("Bruno's tasks: \(bruno.tasks.map(\.text))")

// MARK: The stored documents, and a mongodump directory

print("\n== As stored: a list of links is an array of the tasks' _ids; the backlink is not stored")
for collection in ["User", "Task"] {
  let documents = try reef.store.read { try $0.collection(collection).find().toArray() }
  for document in documents { print("\(collection): \(document.extendedJSON(.relaxed))") }
}
let report = try reef.store.exportDump(to: DumpWriter(path: "dump", format: .dump, defaultDatabase: "UserTasks"))
for entry in report.entries {
  print("dump/UserTasks/\(entry.collection).bson (documents: \(entry.documents))")
}
