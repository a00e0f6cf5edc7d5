// The checks the HDF5 wrapper makes before it reads anything a file declares: the shape of
// an attribute, the kind of a link, where a dataset's data lives (src/base/h5.hpp).
#include "h5.hpp"

#include "error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ringscale::h5 {

std::string describe_space(hid_t space) {
    switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR:
        return "scalar";
    case H5S_NULL:
        return "empty (null dataspace)";
    case H5S_SIMPLE:
        break;
    default:
        return "of no valid shape";
    }
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0 || rank > H5S_MAX_RANK)
        return "of no valid shape";
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    return fmt::format("of shape [{}]", fmt::join(dims, ", "));
}

handle open_scalar_attr(hid_t obj, const std::string& name) {
    handle attr(RINGSCALE_H5_CALL(H5Aopen(obj, name.c_str(), H5P_DEFAULT)), H5Aclose);
    handle space(RINGSCALE_H5_CALL(H5Aget_space(attr.id())), H5Sclose);
    if (H5Sget_simple_extent_type(space.id()) != H5S_SCALAR)
        throw error(error_kind::hdf5, fmt::format("attribute '{}' is {}, not a single value", name,
                                                  describe_space(space.id())));
    return attr;
}

void group::require_hard_link(const std::string& name) const {
    if (name == ".")
        return; // the group itself, no link
    H5L_info_t info{};
    RINGSCALE_H5_CALL(H5Lget_info(id(), name.c_str(), &info, H5P_DEFAULT));
    if (info.type == H5L_TYPE_EXTERNAL)
        throw error(error_kind::hdf5,
                    fmt::format("'{}' is an external link to another file: not followed", name));
    if (info.type != H5L_TYPE_HARD)
        throw error(error_kind::hdf5,
                    fmt::format("'{}' is a soft or user-defined link: not followed", name));
}

dataset_info group::inspect(const std::string& name) const {
    dataset_info info;
    open_checked(name, info);
    return info;
}

handle group::open_checked(const std::string& name, dataset_info& info) const {
    require_hard_link(name);
    handle ds(RINGSCALE_H5_CALL(H5Dopen2(id(), name.c_str(), H5P_DEFAULT)), H5Dclose);
    handle dcpl(RINGSCALE_H5_CALL(H5Dget_create_plist(ds.id())), H5Pclose);
    if (RINGSCALE_H5_CALL(H5Pget_external_count(dcpl.id())) > 0)
        throw error(error_kind::hdf5, fmt::format("dataset '{}' keeps its data in external "
                                                  "files: not read",
                                                  name));
    if (H5Pget_layout(dcpl.id()) == H5D_VIRTUAL)
        throw error(error_kind::hdf5,
                    fmt::format("dataset '{}' is a virtual dataset, its data in other files: not "
                                "read",
                                name));
    handle type(RINGSCALE_H5_CALL(H5Dget_type(ds.id())), H5Tclose);
    handle space(RINGSCALE_H5_CALL(H5Dget_space(ds.id())), H5Sclose);
    info = {};
    info.type_class = H5Tget_class(type.id());
    const int rank = RINGSCALE_H5_CALL(H5Sget_simple_extent_ndims(space.id()));
    info.dims.resize(static_cast<std::size_t>(rank));
    RINGSCALE_H5_CALL(H5Sget_simple_extent_dims(space.id(), info.dims.data(), nullptr));
    // npoints saturates rather than wrapping, so a product of huge declared dims stays huge.
    info.points =
        static_cast<std::uint64_t>(RINGSCALE_H5_CALL(H5Sget_simple_extent_npoints(space.id())));
    return ds;
}

} // namespace ringscale::h5
