#include "h5.hpp"

#include "error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ringscale::h5 {

namespace {

herr_t collect_error(unsigned n, const H5E_error2_t* err, void* data) {
    auto* out = static_cast<std::string*>(data);
    if (n < 3) // the innermost frames say what went wrong; deeper ones repeat it
        *out += fmt::format("{}{} ({})", out->empty() ? "" : "; ", err->desc ? err->desc : "?",
                            err->func_name ? err->func_name : "?");
    return 0;
}

std::string error_stack() {
    std::string text;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &text);
    H5Eclear2(H5E_DEFAULT);
    // Some HDF5 descriptions carry newlines (file-open failures): an error stays one line.
    for (char& c : text)
        if (c == '\n' || c == '\r')
            c = ' ';
    return text.empty() ? "unknown HDF5 failure" : text;
}

handle make_string_type() {
    hid_t t = RINGSCALE_H5_CALL(H5Tcopy(H5T_C_S1));
    handle h(t, H5Tclose);
    RINGSCALE_H5_CALL(H5Tset_size(t, H5T_VARIABLE));
    RINGSCALE_H5_CALL(H5Tset_cset(t, H5T_CSET_UTF8));
    return h;
}

handle scalar_space() {
    return handle(RINGSCALE_H5_CALL(H5Screate(H5S_SCALAR)), H5Sclose);
}

/// An attribute's type class (of an attribute opened with open_scalar_attr).
H5T_class_t attr_class(const handle& attr) {
    handle type(RINGSCALE_H5_CALL(H5Aget_type(attr.id())), H5Tclose);
    return H5Tget_class(type.id());
}

[[noreturn]] void wrong_class(const std::string& name, const char* expected) {
    throw error(error_kind::hdf5, fmt::format("attribute '{}' is not {}", name, expected));
}

handle create_attr(hid_t obj, const std::string& name, hid_t type) {
    if (H5Aexists(obj, name.c_str()) > 0)
        RINGSCALE_H5_CALL(H5Adelete(obj, name.c_str()));
    handle space = scalar_space();
    return handle(RINGSCALE_H5_CALL(
                      H5Acreate2(obj, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT)),
                  H5Aclose);
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}

herr_t collect_attr_name(hid_t, const char* name, const H5A_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}

} // namespace

hid_t check(hid_t status, const char* call, const char* file, int line) {
    if (status < 0)
        throw_call_error(error_kind::hdf5, call, error_stack(), file, line);
    return status;
}

void quiet_errors() {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

template <>
hid_t native_type<double>() {
    return H5T_NATIVE_DOUBLE;
}
template <>
hid_t native_type<std::int32_t>() {
    return H5T_NATIVE_INT32;
}
template <>
hid_t native_type<std::uint8_t>() {
    return H5T_NATIVE_UINT8;
}
template <>
hid_t native_type<std::uint64_t>() {
    return H5T_NATIVE_UINT64;
}

// ---- attributes ----------------------------------------------------------------

void object::set_attr(const std::string& name, const std::string& value) const {
    handle type = make_string_type();
    handle attr = create_attr(id(), name, type.id());
    const char* ptr = value.c_str();
    RINGSCALE_H5_CALL(H5Awrite(attr.id(), type.id(), &ptr));
}

void object::set_attr(const std::string& name, std::int64_t value) const {
    handle attr = create_attr(id(), name, H5T_STD_I64LE);
    RINGSCALE_H5_CALL(H5Awrite(attr.id(), H5T_NATIVE_INT64, &value));
}

void object::set_attr(const std::string& name, double value) const {
    handle attr = create_attr(id(), name, H5T_IEEE_F64LE);
    RINGSCALE_H5_CALL(H5Awrite(attr.id(), H5T_NATIVE_DOUBLE, &value));
}

bool object::has_attr(const std::string& name) const {
    return RINGSCALE_H5_CALL(H5Aexists(id(), name.c_str())) > 0;
}

std::vector<std::string> object::attr_names() const {
    std::vector<std::string> names;
    hsize_t idx = 0;
    RINGSCALE_H5_CALL(
        H5Aiterate2(id(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr_name, &names));
    return names;
}

attr_type object::attr_kind(const std::string& name) const {
    handle attr(RINGSCALE_H5_CALL(H5Aopen(id(), name.c_str(), H5P_DEFAULT)), H5Aclose);
    switch (attr_class(attr)) {
    case H5T_STRING:
        return attr_type::string;
    case H5T_INTEGER:
        return attr_type::integer;
    case H5T_FLOAT:
        return attr_type::floating;
    default:
        return attr_type::other;
    }
}

std::string object::attr_string(const std::string& name) const {
    handle attr = open_scalar_attr(id(), name);
    handle type(RINGSCALE_H5_CALL(H5Aget_type(attr.id())), H5Tclose);
    if (H5Tget_class(type.id()) != H5T_STRING)
        wrong_class(name, "a string");
    if (H5Tis_variable_str(type.id()) > 0) {
        handle mem = make_string_type();
        char* ptr = nullptr;
        RINGSCALE_H5_CALL(H5Aread(attr.id(), mem.id(), &ptr));
        std::string value = ptr ? ptr : "";
        H5free_memory(ptr);
        return value;
    }
    const std::size_t size = H5Tget_size(type.id());
    if (size == 0 || size > max_attr_string_bytes)
        throw error(error_kind::hdf5,
                    fmt::format("attribute '{}' declares a string of {} bytes", name, size));
    std::string value(size, '\0');
    RINGSCALE_H5_CALL(H5Aread(attr.id(), type.id(), value.data()));
    value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
    return value;
}

std::int64_t object::attr_int(const std::string& name) const {
    handle attr = open_scalar_attr(id(), name);
    if (attr_class(attr) != H5T_INTEGER)
        wrong_class(name, "an integer");
    std::int64_t value = 0;
    RINGSCALE_H5_CALL(H5Aread(attr.id(), H5T_NATIVE_INT64, &value));
    return value;
}

double object::attr_double(const std::string& name) const {
    handle attr = open_scalar_attr(id(), name);
    if (attr_class(attr) != H5T_INTEGER && attr_class(attr) != H5T_FLOAT)
        wrong_class(name, "a number");
    double value = 0;
    RINGSCALE_H5_CALL(H5Aread(attr.id(), H5T_NATIVE_DOUBLE, &value));
    return value;
}

std::string object::attr_as_text(const std::string& name) const {
    switch (attr_kind(name)) {
    case attr_type::string:
        return attr_string(name);
    case attr_type::integer:
        return std::to_string(attr_int(name));
    case attr_type::floating:
        return fmt::format("{}", attr_double(name));
    default:
        return "?";
    }
}

// ---- groups and datasets ---------------------------------------------------------

group group::create_group(const std::string& name) const {
    return group(handle(
        RINGSCALE_H5_CALL(H5Gcreate2(id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
        H5Gclose));
}

group group::open_group(const std::string& name) const {
    require_hard_link(name);
    return group(handle(RINGSCALE_H5_CALL(H5Gopen2(id(), name.c_str(), H5P_DEFAULT)), H5Gclose));
}

bool group::exists(const std::string& name) const {
    return H5Lexists(id(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> group::children() const {
    std::vector<std::string> names;
    hsize_t idx = 0;
    RINGSCALE_H5_CALL(H5Literate(id(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, &names));
    return names;
}

std::uint64_t group::object_address(const std::string& name) const {
    require_hard_link(name);
    H5O_info_t info{};
    RINGSCALE_H5_CALL(H5Oget_info_by_name2(id(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT));
    return static_cast<std::uint64_t>(info.addr);
}

template <class T>
void group::write(const std::string& name, const std::vector<T>& data,
                  const std::vector<hsize_t>& dims) const {
    hsize_t n = 1;
    for (hsize_t d : dims)
        n *= d;
    if (n != data.size())
        throw error(error_kind::hdf5,
                    fmt::format("dataset '{}': {} values for shape of {}", name, data.size(), n));
    handle space(
        RINGSCALE_H5_CALL(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr)),
        H5Sclose);
    handle ds(RINGSCALE_H5_CALL(H5Dcreate2(id(), name.c_str(), native_type<T>(), space.id(),
                                           H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
              H5Dclose);
    if (n > 0)
        RINGSCALE_H5_CALL(
            H5Dwrite(ds.id(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()));
}

template <class T>
std::vector<T> group::read(const std::string& name, std::vector<hsize_t>* dims,
                           std::uint64_t max_bytes, const header_check& check) const {
    dataset_info info;
    const handle ds = open_checked(name, info);
    if (check)
        check(info);
    if (info.type_class != H5T_INTEGER && info.type_class != H5T_FLOAT)
        throw error(error_kind::hdf5, fmt::format("dataset '{}' does not hold numbers", name));
    const auto n = info.points;
    if (static_cast<long double>(n) * sizeof(T) > static_cast<long double>(max_bytes))
        throw error(error_kind::hdf5,
                    fmt::format("dataset '{}' declares shape [{}], {:.3g} bytes, more than the "
                                "{} bytes the file can hold",
                                name, fmt::join(info.dims, ", "),
                                static_cast<double>(n) * sizeof(T), max_bytes));
    std::vector<T> data(static_cast<std::size_t>(n));
    if (n > 0)
        RINGSCALE_H5_CALL(
            H5Dread(ds.id(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()));
    if (dims)
        *dims = info.dims;
    return data;
}

void group::write_strings(const std::string& name, const std::vector<std::string>& values) const {
    handle type = make_string_type();
    const hsize_t n = values.size();
    handle space(RINGSCALE_H5_CALL(H5Screate_simple(1, &n, nullptr)), H5Sclose);
    handle ds(RINGSCALE_H5_CALL(H5Dcreate2(id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT,
                                           H5P_DEFAULT, H5P_DEFAULT)),
              H5Dclose);
    std::vector<const char*> ptrs;
    for (const auto& v : values)
        ptrs.push_back(v.c_str());
    if (n > 0)
        RINGSCALE_H5_CALL(H5Dwrite(ds.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()));
}

void group::write_string(const std::string& name, const std::string& value) const {
    handle type = make_string_type();
    handle space = scalar_space();
    handle ds(RINGSCALE_H5_CALL(H5Dcreate2(id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT,
                                           H5P_DEFAULT, H5P_DEFAULT)),
              H5Dclose);
    const char* ptr = value.c_str();
    RINGSCALE_H5_CALL(H5Dwrite(ds.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &ptr));
}

std::vector<std::string> group::read_strings(const std::string& name,
                                             std::uint64_t max_points) const {
    dataset_info info;
    const handle ds = open_checked(name, info);
    if (info.type_class != H5T_STRING)
        throw error(error_kind::hdf5, fmt::format("dataset '{}' does not hold strings", name));
    if (info.points > max_points)
        throw error(error_kind::hdf5, fmt::format("dataset '{}' declares {} strings, more than "
                                                  "the {} it can hold",
                                                  name, info.points, max_points));
    handle space(RINGSCALE_H5_CALL(H5Dget_space(ds.id())), H5Sclose);
    const auto n = info.points;
    handle type = make_string_type();
    std::vector<char*> ptrs(static_cast<std::size_t>(n), nullptr);
    if (n > 0)
        RINGSCALE_H5_CALL(H5Dread(ds.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()));
    std::vector<std::string> values;
    for (char* p : ptrs)
        values.emplace_back(p ? p : "");
    if (n > 0)
        H5Dvlen_reclaim(type.id(), space.id(), H5P_DEFAULT, ptrs.data());
    return values;
}

std::string group::read_string(const std::string& name) const {
    auto values = read_strings(name, 1);
    if (values.size() != 1)
        throw error(error_kind::hdf5, fmt::format("dataset '{}' holds no string", name));
    return values.front();
}

template void group::write<double>(const std::string&, const std::vector<double>&,
                                   const std::vector<hsize_t>&) const;
template void group::write<std::int32_t>(const std::string&, const std::vector<std::int32_t>&,
                                         const std::vector<hsize_t>&) const;
template void group::write<std::uint8_t>(const std::string&, const std::vector<std::uint8_t>&,
                                         const std::vector<hsize_t>&) const;
template void group::write<std::uint64_t>(const std::string&, const std::vector<std::uint64_t>&,
                                          const std::vector<hsize_t>&) const;
template std::vector<double> group::read<double>(const std::string&, std::vector<hsize_t>*,
                                                 std::uint64_t, const group::header_check&) const;
template std::vector<std::int32_t> group::read<std::int32_t>(const std::string&,
                                                             std::vector<hsize_t>*, std::uint64_t,
                                                             const group::header_check&) const;

// ---- files -----------------------------------------------------------------------

file file::create(const std::string& path, bool exclusive) {
    quiet_errors();
    hid_t id =
        H5Fcreate(path.c_str(), exclusive ? H5F_ACC_EXCL : H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (id < 0)
        throw error(error_kind::hdf5,
                    fmt::format("cannot create HDF5 file '{}': {}", path, error_stack()));
    return file(handle(id, H5Fclose), path);
}

file file::open_read(const std::string& path) {
    quiet_errors();
    hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0)
        throw error(error_kind::hdf5,
                    fmt::format("cannot open '{}' as an HDF5 file: {}", path, error_stack()));
    return file(handle(id, H5Fclose), path);
}

group file::root() const {
    return group(handle(RINGSCALE_H5_CALL(H5Gopen2(m_h.id(), "/", H5P_DEFAULT)), H5Gclose));
}

void file::flush() const {
    RINGSCALE_H5_CALL(H5Fflush(m_h.id(), H5F_SCOPE_GLOBAL));
}

} // namespace ringscale::h5
