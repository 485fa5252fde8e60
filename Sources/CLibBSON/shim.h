#include <bson.h>
