#include "resolve/name_table.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(NameTableTest, InternsByTextWithDenseIds) {
  NameTable t;
  Name a = t.Intern("alpha");
  Name b = t.Intern("beta");
  EXPECT_EQ(a.id, 1u);
  EXPECT_EQ(b.id, 2u);
  EXPECT_EQ(t.Intern("alpha").id, 1u);
  EXPECT_EQ(t.Text(2), "beta");
}

TEST(NameTableTest, MapsUpstreamNamesIntoOneSpace) {
  NameTable t;
  Name made = t.Intern("f");
  // Upstream id 1 has the text our id 1 has, upstream 7 is new: ids follow the text.
  EXPECT_EQ(t.Map(Name{1, "f"}).id, made.id);
  Name seven = t.Map(Name{7, "g"});
  EXPECT_EQ(seven.text, "g");
  EXPECT_EQ(t.Map(Name{7, "g"}).id, seven.id);
  EXPECT_EQ(t.Map(Name{}).id, 0u);
  EXPECT_EQ(t.Map(Name{1u << 30, "huge"}).text, "huge");
}

}  // namespace
}  // namespace cg_inject
