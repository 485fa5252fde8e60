import Foundation
import ReefSwift
import ReefTestSupport
import Testing

@Suite struct DescriptionTests {
  @Test func anObjectIsDescribedInRealmsForm() throws {
    let (reef, cellar) = try openCellarForDescriptions()
    let bottle = try #require(reef.object(ofType: Bottle.self, forPrimaryKey: 2))
    let text = bottle.description
    #expect(text.hasPrefix("Bottle {\n\tid = 2;\n\tlabel = Tokaji;\n\tvolume = 500;\n\tprice = 20.0;\n"), "\(text)")
    #expect(text.contains("\tnote = (null);"), "nil as Realm shows it: \(text)")
    #expect(text.contains("\tcellar = Cellar {\n\t\tid = 1;\n\t\tname = north;\n"), "a linked object nested: \(text)")
    #expect(text.contains("\t\tbottles = List<Bottle> <0x"), "\(text)")
    #expect(cellar.description.contains("\tstock = Map<string, int> <0x"))
  }

  @Test func anObjectWithoutAPrimaryKeyShowsOnlyItsDeclaredProperties() throws {
    let (reef, _) = try openReef()
    let rex = Dog()
    rex.name = "Rex"
    rex.age = 3
    #expect(rex.description == "Dog {\n\tname = Rex;\n\tage = 3;\n\tbreed = (null);\n}")
    try reef.write { reef.add(rex) }
    #expect(rex.description == "Dog {\n\tname = Rex;\n\tage = 3;\n\tbreed = (null);\n}", "no hidden _id")
  }

  @Test func collectionsAreDescribedInRealmsForm() throws {
    let (reef, cellar) = try openCellarForDescriptions()
    let list = cellar.bottles.description
    #expect(list.hasPrefix("List<Bottle> <0x") && list.contains(" (\n\t[0] Bottle {\n\t\tid = 1;"), "\(list)")
    #expect(list.hasSuffix("\n)"))
    let results = reef.objects(Bottle.self).filter("id == 1").description
    #expect(results.hasPrefix("Results<Bottle> <0x") && results.contains("\t[0] Bottle {\n\t\tid = 1;"), "\(results)")
    let (_, stocked) = try openCellar()
    let byName = stocked.byName.description
    #expect(byName.hasPrefix("Map<string, Bottle> <0x"), "\(byName)")
    #expect(byName.contains("\t[b2]: Bottle {\n\t\tid = 2;\n\t\tlabel = Tokaji;"), "\(byName)")
    let stock = cellar.stock.description
    #expect(stock.contains("\t[red]: 12") && stock.contains("\t[white]: 3"), "\(stock)")
    let tags = List<String?>()
    tags.append(objectsIn: ["a", nil])
    #expect(tags.description.hasSuffix("(\n\t[0] a,\n\t[1] <null>\n)"), "\(tags.description)")
  }

  @Test func anObjectThatHoldsItselfIsDescribedFiveLevelsDeep() throws {
    let (reef, cellar) = try openCellarForDescriptions()
    let text = cellar.bottles.description
    #expect(text.contains("<Maximum depth exceeded>"), "\(text)")
    _ = reef
  }
}

/// A cellar (id 1, "north") holding bottles 1 to 3 in its list, set and map, each linked back.
func openCellarForDescriptions() throws -> (Reef, Cellar) {
  let (reef, _) = try openReef("described", types: [Bottle.self, Cellar.self])
  let cellar = try reef.write {
    let cellar = reef.create(Cellar.self, value: ["id": 1, "name": "north", "stock": ["red": 12, "white": 3]])
    for (id, label) in [(1, "Rioja"), (2, "Tokaji"), (3, "Rioja")] {
      let bottle = reef.create(
        Bottle.self, value: ["id": id, "label": label, "volume": id == 2 ? 500 : 750, "price": Double(id) * 10])
      bottle.cellar = cellar
      cellar.bottles.append(bottle)
    }
    return cellar
  }
  return (reef, cellar)
}
