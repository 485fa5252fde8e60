import ReefBSON

let doc: Document = ["name": "Ada", "address": ["city": "London"]]
print(doc["address.city"] ?? .null)
