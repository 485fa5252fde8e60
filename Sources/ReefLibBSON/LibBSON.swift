import CLibBSON
import ReefBSON
